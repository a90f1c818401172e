/* libnettrace.la is libnettrace_core.la with only the public symbols exported. */
typedef int empty_translation_unit_;
