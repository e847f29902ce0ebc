# cmake -DCOMPILER=... -DFLAGS=a|b|c -DSOURCE=file.cpp -P compile_fail.cmake
# Passes when compiling SOURCE fails AND the diagnostics match the file's `// expect: <regex>` line.
file(STRINGS ${SOURCE} expect REGEX "^// expect: " LIMIT_COUNT 1)
string(REGEX REPLACE "^// expect: " "" expect "${expect}")
string(REPLACE "|" ";" flags "${FLAGS}")
execute_process(COMMAND ${COMPILER} ${flags} ${SOURCE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "compile_fail: ${SOURCE} compiled, but it must not")
endif()
if(NOT out MATCHES "${expect}")
  message(FATAL_ERROR "compile_fail: ${SOURCE} failed to compile, but not with the expected message\n"
                      "expected (regex): ${expect}\n--- diagnostics ---\n${out}")
endif()
message(STATUS "compile_fail: ${SOURCE} refused as expected")
