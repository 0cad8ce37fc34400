// The signals that stop a gateway: SIGINT, SIGTERM and SIGUSR1 (the one oshrun forwards to every PE without
// aborting the job; scripts/shmemcached.sh sends it on Ctrl-C). They are blocked in the calling thread and in
// every thread started after (so the OpenSHMEM runtime's threads never take them) and read from a signalfd in
// the event loop.
#ifndef SHMEMCACHED_APP_STOP_SIGNALS_H_
#define SHMEMCACHED_APP_STOP_SIGNALS_H_

namespace shmemcached {

// Blocks the stop signals and ignores SIGPIPE (writes to a closed client socket fail with EPIPE instead).
void BlockStopSignals();
// A non-blocking signalfd that becomes readable when a stop signal arrives; -1 on failure (errno set).
int OpenStopSignalFd();

}  // namespace shmemcached

#endif  // SHMEMCACHED_APP_STOP_SIGNALS_H_
