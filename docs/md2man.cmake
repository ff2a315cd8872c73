# Turns one Markdown man page into roff: the "# name(1)" heading becomes a
# title block that go-md2man writes as .TH, the rest is converted as is.
# cmake -DSRC=page.1.md -DOUT=page.1 -DTITLE=NAME -DVERSION=V -DMD2MAN=go-md2man -P md2man.cmake
file(READ ${SRC} text)
string(REGEX REPLACE "^# [^\n]*\n" "" body "${text}")
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
set(tmp ${OUT}.md)
file(WRITE ${tmp} "% ${TITLE} 1 \"\" \"jitstall ${VERSION}\" \"jitstall manual\"\n${body}")
execute_process(COMMAND ${MD2MAN} -in ${tmp} -out ${OUT} RESULT_VARIABLE rc)
file(REMOVE ${tmp})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "go-md2man failed on ${SRC}")
endif()
