// A probe of the layering (tests/layering/CMakeLists.txt): compiled as a source of the layer named by
// PROBE_LAYER against that layer's include view, it includes PROBE_HEADER. A header of the layer itself or of a
// layer below must compile; one of a layer above (or shmem.h outside src/shmem) must not.
#include PROBE_HEADER

int layering_probe = 0;
