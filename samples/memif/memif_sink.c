// pkg-config: libmemif
/*
 * memif_sink: packet sink (checks count, order and content; reports rate and loss).
 * Options: memif_sink --help. The same program is "softdpu memif sink" (see memif_app.h).
 */
#include "memif_app.h"

int main(int argc, char **argv)
{
	return memif_app_sink_main(argc, argv);
}
