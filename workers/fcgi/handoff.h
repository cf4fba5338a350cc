// Passing idle FastCGI connections between workers: a datagram socket pair shared by the whole
// pool (created by the supervisor), one descriptor per datagram (SCM_RIGHTS).
//
// nginx keeps upstream connections open between requests (fastcgi_keep_conn), and a worker serves
// one request at a time. A worker busy with a long request sends the connections it holds on which
// nginx has written a request into the pair, so an idle worker serves them instead of letting them
// wait; a worker that exits sends all of them. The connection itself never closes, so nothing
// nginx sends is lost and no request races a close.
#pragma once

namespace sigil::workers {

// The pair is socketpair(AF_UNIX, SOCK_DGRAM): every worker sends on one end and receives on the
// other (sigil-supervisor passes both, named by $SIGIL_HANDOFF_SEND_FD and $SIGIL_HANDOFF_RECV_FD).

// Sends `fd` without blocking. True when it is queued: the caller then closes its copy. False when
// the queue is full or the pair is gone: the caller keeps the connection.
bool SendConnection(int send_fd, int fd);

// Takes one connection without blocking: the descriptor (close-on-exec), or -1 when none is
// queued. A datagram carrying anything but exactly one descriptor is dropped (its descriptors
// closed) and -1 returned.
int ReceiveConnection(int recv_fd);

}  // namespace sigil::workers
