// One client socket: non-blocking reads into a bounded input queue, the protocol Session, and writes of the
// output queue as the socket accepts them. Reading stops while the session is paused on a full output (the
// client is not reading), so a slow reader holds at most Limits' worth of memory; it resumes once the output
// has drained to half the high-water mark.
//
// Answers waiting in the gateway's answer batch (protocol/answer_batch.h) are not sent, nor anything after them:
// the connection asks the server to tell it when the batch has completed (AnswersWritten), then sends.
//
// A connection is closed by the server (Close) and freed only after the current event batch, so events
// already collected for it are ignored safely (dead()).
#ifndef SHMEMCACHED_NET_CONNECTION_H_
#define SHMEMCACHED_NET_CONNECTION_H_

#include <cstdint>

#include "net/event_loop.h"
#include "protocol/byte_queue.h"
#include "protocol/gateway_context.h"
#include "protocol/session.h"

namespace shmemcached {

class GatewayServer;

class Connection final : public EventHandler, public AnswerListener {
 public:
  // Takes ownership of fd (non-blocking, already registered by the caller through Register()).
  Connection(int fd, GatewayServer* server, GatewayContext* gateway);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool Register(EventLoop* loop);
  void OnEvents(uint32_t events) override;
  // The session's deferred answers are written: sends them (AnswerListener).
  void AnswersReady() override;
  // The gateway's answer batch completed: sends the answers and carries on with the input.
  void AnswersWritten();
  // Unregisters and closes the socket; the server frees the object later.
  void Close();
  bool dead() const { return fd_ < 0; }
  // Its session has answers in the gateway's answer batch.
  bool answers_deferred() const { return session_.answers_deferred(); }

  // Memory held for this client (tests check the bounds).
  size_t buffered_input() const { return in_.size(); }
  size_t buffered_output() const { return out_.size(); }

 private:
  void ReadAndProcess();
  // Runs the session on what is buffered and writes what it can, resuming a paused session as output drains.
  void Drive();
  void Flush();
  void UpdateInterest();

  int fd_;
  GatewayServer* server_;
  GatewayContext* gateway_;
  EventLoop* loop_ = nullptr;
  Session session_;
  ByteQueue in_, out_;
  bool paused_ = false;         // the session waits for the output to drain
  bool close_after_write_ = false;
  bool eof_ = false;            // the client shut its sending side
  bool awaiting_answers_ = false;  // listed with the server until its answer batch completes
  uint32_t interest_ = 0;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_NET_CONNECTION_H_
