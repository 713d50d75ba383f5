# portcullis_proto_library(NAME PROTOS a.proto ... [GRPC] [DEPS ...])
#   The one way protos are compiled. PROTOS are paths relative to proto/; generated code lands in
#   the build tree under the same relative paths, so includes read
#   "portcullis/verifier/v1/verifier.pb.h".
include_guard(GLOBAL)

function(portcullis_proto_library name)
  cmake_parse_arguments(ARG "GRPC" "" "PROTOS;DEPS" ${ARGN})
  set(proto_root "${PROJECT_SOURCE_DIR}/proto")
  set(out_dir "${PROJECT_BINARY_DIR}/generated")
  file(MAKE_DIRECTORY "${out_dir}")
  set(sources)
  foreach(proto IN LISTS ARG_PROTOS)
    string(REGEX REPLACE "\\.proto$" "" stem "${proto}")
    set(outputs "${out_dir}/${stem}.pb.cc" "${out_dir}/${stem}.pb.h")
    set(command_args --proto_path=${proto_root} --cpp_out=${out_dir})
    if(ARG_GRPC)
      list(APPEND outputs "${out_dir}/${stem}.grpc.pb.cc" "${out_dir}/${stem}.grpc.pb.h")
      list(APPEND command_args --grpc_out=${out_dir}
           --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>)
    endif()
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND protobuf::protoc ${command_args} "${proto_root}/${proto}"
      DEPENDS "${proto_root}/${proto}" protobuf::protoc
      COMMENT "protoc ${proto}"
      VERBATIM)
    list(APPEND sources ${outputs})
  endforeach()
  add_library(portcullis_${name} STATIC ${sources})
  add_library(portcullis::${name} ALIAS portcullis_${name})
  # Generated code is not ours to warn about; it is included as a system header.
  target_include_directories(portcullis_${name} SYSTEM PUBLIC "${out_dir}")
  target_link_libraries(portcullis_${name} PUBLIC protobuf::libprotobuf ${ARG_DEPS})
  if(ARG_GRPC)
    target_link_libraries(portcullis_${name} PUBLIC gRPC::grpc++)
  endif()
endfunction()
