package transport

import "github.com/agentrun/agentrun/protocol"

// queue hands out, one at a time, the messages that decoding one wire event produced:
// the buffer behind EventDecoder's Next and Message, whose Next decodes
// another event whenever queue.Next finds nothing left.
type queue struct {
	msgs []protocol.Message
	head int // msgs[head-1] is the current message; msgs[head:] are still to come
}

// Push queues ms in order.
func (q *queue) Push(ms ...protocol.Message) { q.msgs = append(q.msgs, ms...) }

// Next makes the next queued message current and reports whether there was one. When
// none is left it empties the queue for the messages of the next event.
func (q *queue) Next() bool {
	if q.head < len(q.msgs) {
		q.head++
		return true
	}
	q.msgs, q.head = q.msgs[:0], 0
	return false
}

// Message returns the current message: the zero Message before the first Next and
// after the last.
func (q *queue) Message() protocol.Message {
	if q.head == 0 {
		return protocol.Message{}
	}
	return q.msgs[q.head-1]
}
