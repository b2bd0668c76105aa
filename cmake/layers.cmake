# The product's layers, one OBJECT library each (specprobe_<layer>), lowest first, each linking only
# the layers it may use. Data flows one way:
#   common -> {inputs, gpu} -> facts -> {rules, probes} -> pipeline -> report -> cli,
# with resolve (the models a plan names, from the Hub) on inputs, below the pipeline.
# The same map is the readable statement in tests/layering_test.cpp, which checks every #include
# against it and checks that this file says the same (the build writes the map to
# ${CMAKE_BINARY_DIR}/generated/layers.txt); the ctest layer_symbols reads each layer's objects
# with nm and checks that every symbol a layer uses is defined in it or in a layer it links.
# specprobe_lib (CMakeLists.txt) archives every layer with the compiled catalog.
set(SPECPROBE_LAYERS common inputs gpu resolve facts rules probes pipeline report cli)
set(SPECPROBE_LAYER_DEPS_common "")
set(SPECPROBE_LAYER_DEPS_inputs common)
set(SPECPROBE_LAYER_DEPS_gpu common)
set(SPECPROBE_LAYER_DEPS_resolve common inputs)
set(SPECPROBE_LAYER_DEPS_facts common inputs gpu)
set(SPECPROBE_LAYER_DEPS_rules common inputs gpu facts)
set(SPECPROBE_LAYER_DEPS_probes common inputs gpu facts)
set(SPECPROBE_LAYER_DEPS_pipeline common inputs gpu resolve facts rules probes)
# The printers: the report model only (pipeline/report.hpp; the rule result and matrix types it
# re-exports link through the pipeline, issue 53).
set(SPECPROBE_LAYER_DEPS_report common pipeline)
# The CLI: the pipeline and the report, plus what its subcommands use directly (`probe` and
# `engines` the probes, `rules` / `explain` / `gpu` the catalog, facts registry and GPU table,
# `check --lib` the library names, `probe --python` the deployment's Python).
set(SPECPROBE_LAYER_DEPS_cli common inputs gpu facts rules probes pipeline report)

file(GLOB_RECURSE SPECPROBE_LAYER_SOURCES_common CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/common/*.cpp)
list(FILTER SPECPROBE_LAYER_SOURCES_common EXCLUDE REGEX ".*/src/common/(glibc_compat|allocator_conf)\\.cpp$")  # executable only
list(APPEND SPECPROBE_LAYER_SOURCES_common ${SPECPROBE_EMBED_CPP})  # common/embedded.hpp's documents
foreach(layer inputs gpu resolve facts rules pipeline report cli)
  file(GLOB_RECURSE SPECPROBE_LAYER_SOURCES_${layer} CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${layer}/*.cpp)
endforeach()
file(GLOB_RECURSE SPECPROBE_LAYER_SOURCES_probes CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/probes/*.cpp)

set(_layer_map "")
foreach(layer ${SPECPROBE_LAYERS})
  add_library(specprobe_${layer} OBJECT ${SPECPROBE_LAYER_SOURCES_${layer}})
  target_include_directories(specprobe_${layer} PUBLIC ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}
    ${CMAKE_BINARY_DIR}/generated)
  target_link_libraries(specprobe_${layer} PUBLIC nlohmann_json::nlohmann_json fmt::fmt-header-only
    ${SPECPROBE_YAML_CPP} CLI11::CLI11 Threads::Threads ${CMAKE_DL_LIBS})
  foreach(dep ${SPECPROBE_LAYER_DEPS_${layer}})
    target_link_libraries(specprobe_${layer} PUBLIC specprobe_${dep})
  endforeach()
  target_compile_options(specprobe_${layer} PRIVATE -Wall -Wextra)
  if(layer STREQUAL "common")
    target_precompile_headers(specprobe_common PUBLIC
      <nlohmann/json.hpp> <fmt/format.h> <string> <vector> <map> <optional>)
  else()
    target_precompile_headers(specprobe_${layer} REUSE_FROM specprobe_common)
  endif()
  string(REPLACE ";" " " _deps "${SPECPROBE_LAYER_DEPS_${layer}}")
  string(APPEND _layer_map "${layer}:${_deps}\n")
endforeach()
target_include_directories(specprobe_resolve PRIVATE ${SPECPROBE_CURL_INCLUDE_DIR})
file(WRITE ${CMAKE_BINARY_DIR}/generated/layers.txt "${_layer_map}")

# Each layer's object files, for the symbol check (tests/style/layer_symbols.py).
set(_objects "")
foreach(layer ${SPECPROBE_LAYERS})
  string(APPEND _objects "${layer}:$<JOIN:$<TARGET_OBJECTS:specprobe_${layer}>,;>\n")
endforeach()
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/generated/layer_objects.txt CONTENT "${_objects}")
