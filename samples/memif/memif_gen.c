// pkg-config: libmemif
/*
 * memif_gen: packet generator (numbered, patterned frames; optional echo check).
 * Options: memif_gen --help. The same program is "softdpu memif gen" (see memif_app.h).
 */
#include "memif_app.h"

int main(int argc, char **argv)
{
	return memif_app_gen_main(argc, argv);
}
