# wick_add_library(NAME folder DEPS ...): one static library per source folder, named
# wick_<folder> with the alias wick::<folder>, sources globbed from <folder>/src, public headers
# in <folder>/include, installed and exported. Its C++ sources share a precompiled header of the
# standard and fmt headers (Note [Precompiled headers]); CUDA sources do not.
function(wick_add_library folder)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS;EXTRA_SOURCES" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  if(NOT srcs AND NOT ARG_EXTRA_SOURCES)
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/empty.cpp "// no sources yet\n")
    set(srcs ${CMAKE_CURRENT_BINARY_DIR}/empty.cpp)
  endif()
  add_library(wick_${folder} STATIC ${srcs} ${ARG_EXTRA_SOURCES})
  add_library(wick::${folder} ALIAS wick_${folder})
  set_target_properties(wick_${folder} PROPERTIES EXPORT_NAME ${folder} OUTPUT_NAME wick_${folder})
  target_include_directories(wick_${folder} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/generated>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_include_directories(wick_${folder} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(wick_${folder} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_options(wick_${folder} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  if(WICK_PRECOMPILE_HEADERS)
    foreach(header ${WICK_PRECOMPILED_HEADERS})
      target_precompile_headers(wick_${folder} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
    endforeach()
  endif()
  install(TARGETS wick_${folder} EXPORT wickTargets)
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
