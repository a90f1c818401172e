/* libnettrace.la is libnettrace_core.la with only the public symbols exported. */
typedef int nt_empty_translation_unit_;
