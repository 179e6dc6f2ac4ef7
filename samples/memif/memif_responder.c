// pkg-config: libmemif
/*
 * memif_responder: answers ARP requests and ping.
 * Options: memif_responder --help. The same program is "softdpu memif responder" (see memif_app.h).
 */
#include "memif_app.h"

int main(int argc, char **argv)
{
	return memif_app_responder_main(argc, argv);
}
