/*
 * memif example applications: a packet generator, a packet sink and an ARP/ICMP responder, built
 * only on the libmemif 3.1 API (libmemif.h). Each entry point parses its own command line (argv[0]
 * is the program name used in messages) and returns the process exit status: 0 success, 1 a
 * failed check or a run-time error, 2 a usage error.
 *
 * The samples memif_gen, memif_sink and memif_responder are one-line mains around these; the
 * softdpu CLI ("softdpu memif gen|sink|responder") calls the same functions.
 */
#ifndef SOFTDPU_SAMPLES_MEMIF_APP_H
#define SOFTDPU_SAMPLES_MEMIF_APP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Sends numbered, patterned Ethernet frames; with --echo also receives and checks them back. */
int memif_app_gen_main(int argc, char **argv);

/* Receives frames, checks count, order and content, reports rate and loss. */
int memif_app_sink_main(int argc, char **argv);

/* Answers ARP requests and ICMP echo requests for one IPv4 address. */
int memif_app_responder_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
