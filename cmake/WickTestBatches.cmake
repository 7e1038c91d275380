# Note [Test batches]
# The test files compile in batches: one generated translation unit includes up to
# WICK_TEST_BATCH_SIZE test files, each wrapped in a namespace of its own (wick_test_batch_<k>),
# after the union of their #include lines. A test file's own code is small; most of its compile
# time is parsing and instantiating the same headers (Catch2, wick.h, fmt, the standard library)
# again, and the suite compiles three times in CI (default, asan, tsan). A batch of 8 compiled
# in about 0.53 of the time of its files alone (20.6 s against 39.0 s, tests/nn, -O1 -g1). Batches
# of 16 were tried: alone on an idle machine two batches of 8 merged compiled in 0.66 of their
# time (20.0 s against 30.1 s), but in the clean build (two jobs sharing the two cores) the test
# batches took 520 s against 539 s, 0.90-0.95 per batch, while a one-file edit recompiles twice
# as many files. So 8 it stays.
#
# The namespace keeps each file's file-scope names (its anonymous namespace, its `static`
# helpers, its `using` directives) apart from the other files' in the batch, so files need no
# unique names. __FILE__ and __LINE__ are the test file's own, so failures and sanitizer reports
# name the file as before. What cannot be wrapped compiles alone, found by scanning the file:
# - files that are not `*_test.cpp` (their functions are declared in headers, outside any batch);
# - files with preprocessor conditionals or definitions (a macro would leak into the next file);
# - files that open a namespace of their own at the top level (`namespace wick`, `Catch`, `std`,
#   `fmt`) or specialise a template there.
# The generated file is rewritten when one of its files changes (cmake/write_test_batch.cmake),
# so an #include added to a test file is hoisted without reconfiguring. WICK_TEST_BATCH_SIZE 1
# compiles every file alone. docs/architecture.md, "Building".
set(WICK_TEST_BATCH_SIZE 8 CACHE STRING
    "Test files per generated translation unit (Note [Test batches]); 1 compiles each alone")

# wick_test_batches(<out_var> <name> <sources...>): <out_var> gets the sources to compile for a
# test executable: the files that must compile alone, then one generated file per batch.
function(wick_test_batches out_var name)
  set(alone)
  set(batchable)
  foreach(src ${ARGN})
    get_filename_component(fname ${src} NAME)
    set(blockers)
    if(fname MATCHES "_test\\.cpp$")
      file(STRINGS ${src} blockers REGEX "^[ \t]*#[ \t]*(if|define|undef)|^namespace (wick|Catch|std|fmt)|^template <>")
    endif()
    if(WICK_TEST_BATCH_SIZE LESS 2 OR NOT fname MATCHES "_test\\.cpp$" OR blockers)
      list(APPEND alone ${src})
    else()
      list(APPEND batchable ${src})
    endif()
  endforeach()
  set(result ${alone})
  list(LENGTH batchable count)
  set(first 0)
  set(index 0)
  while(first LESS count)
    list(SUBLIST batchable ${first} ${WICK_TEST_BATCH_SIZE} chunk)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/test_batches/${name}_${index}.cpp)
    string(REPLACE ";" "|" chunk_arg "${chunk}")
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DOUTPUT=${out} -DBATCH=${name}_${index} -DSOURCES=${chunk_arg}
              -P ${PROJECT_SOURCE_DIR}/cmake/write_test_batch.cmake
      DEPENDS ${chunk} ${PROJECT_SOURCE_DIR}/cmake/write_test_batch.cmake
      COMMENT "Test batch ${name}_${index} (Note [Test batches])" VERBATIM)
    list(APPEND result ${out})
    math(EXPR first "${first} + ${WICK_TEST_BATCH_SIZE}")
    math(EXPR index "${index} + 1")
  endwhile()
  set(${out_var} ${result} PARENT_SCOPE)
endfunction()
