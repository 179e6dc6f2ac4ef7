# Writes OUTPUT, a C++ source that defines softdpu_git_describe: `git describe --always --dirty`
# of SOURCE_DIR, or "" when GIT is empty or SOURCE_DIR is not a git checkout (a release tarball).
# Run on every build of the softdpu CLI (tools/CMakeLists.txt); the file is rewritten only when
# the text changes, so an unchanged tree rebuilds nothing.
#   cmake -DGIT=/usr/bin/git -DSOURCE_DIR=... -DOUTPUT=.../git_describe.cpp -P git_describe.cmake
set(describe "")
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} describe --always --dirty
    OUTPUT_VARIABLE describe ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE status)
  if(NOT status EQUAL 0 OR NOT describe MATCHES "^[A-Za-z0-9._+-]+$")
    set(describe "")
  endif()
endif()
file(WRITE ${OUTPUT}.new "// Written by cmake/git_describe.cmake.\nextern const char softdpu_git_describe[];\nconst char softdpu_git_describe[] = \"${describe}\";\n")
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
