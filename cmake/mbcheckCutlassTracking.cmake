# mbcheck_cutlass_track_accesses(target): plain loads and stores of the target's own code
# tracked (docs/semantics.md, "Plain accesses of unmodified code"). Its sources are compiled
# with the ThreadSanitizer instrumentation (-fsanitize=thread at compile time only: no
# sanitizer runtime is linked; -g: a race's lines come from the debug information of the
# access's return address), mbcheck's callbacks are linked in the runtime's place, and the link
# wraps memcpy, memmove and memset, which the instrumentation leaves as library calls (-u:
# the wrappers are taken from the archive whichever object calls them first). GCC and Clang.
# Call it on a target linked to mbcheck::cutlass (mbcheck_cutlass in mbcheck's own tree).
function(mbcheck_cutlass_track_accesses target)
  if(TARGET mbcheck::cutlass_access_tracking)
    set(_callbacks mbcheck::cutlass_access_tracking)
  else()
    set(_callbacks mbcheck_cutlass_access_tracking)
  endif()
  target_compile_options(${target} PRIVATE -fsanitize=thread -g)
  target_link_libraries(${target} PRIVATE ${_callbacks})
  target_link_options(${target} PRIVATE
    "LINKER:--wrap=memcpy,--wrap=memmove,--wrap=memset"
    "LINKER:--undefined=__wrap_memcpy,--undefined=__wrap_memmove,--undefined=__wrap_memset")
endfunction()
