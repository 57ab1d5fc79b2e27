package delivery

// AlreadyDelivered is the reason given with StatusDelivered to an item whose
// ID was typed before (a copy the hub delivered again): it is acknowledged,
// not typed twice.
const AlreadyDelivered = "already delivered"

// typedKeep is how many typed ids a queue remembers in memory (besides its
// journal, which may be nil): far more than the hub can have unacknowledged
// for one agent (1000).
const typedKeep = 10000

// idState is where an item's ID is in the queue's life.
type idState uint8

const (
	idNone     idState = iota // not seen (or no ID)
	idWaiting                 // waits in the queue
	idInFlight                // being typed, or taken for a hand-over
	idTyped                   // typed (or handed over) before
)

// ids follows every ID a queue holds, so that Add can tell a copy delivered
// again from a new message. It is guarded by the queue's mutex.
type ids struct {
	journal *Journal
	waiting map[string]bool
	// flying maps an ID being typed to the Done functions of copies that
	// arrived meanwhile.
	flying map[string][]func(Status, string)
	typed  map[string]bool
	order  []string // typed ids, oldest first, to bound typed
}

func newIDs(j *Journal) ids {
	return ids{journal: j, waiting: map[string]bool{}, flying: map[string][]func(Status, string){}, typed: map[string]bool{}}
}

// state says where id is.
func (s *ids) state(id string) idState {
	switch {
	case id == "":
		return idNone
	case s.waiting[id]:
		return idWaiting
	case s.flying[id] != nil:
		return idInFlight
	case s.typed[id], s.journal != nil && s.journal.Seen(id):
		return idTyped
	}
	return idNone
}

// wait records id as waiting in the queue.
func (s *ids) wait(id string) {
	if id != "" {
		s.waiting[id] = true
	}
}

// fly records id as being typed (it left the queue).
func (s *ids) fly(id string) {
	if id == "" {
		return
	}
	delete(s.waiting, id)
	if s.flying[id] == nil {
		s.flying[id] = []func(Status, string){}
	}
}

// follow attaches the Done of a copy of an item in flight.
func (s *ids) follow(id string, done func(Status, string)) {
	if done != nil {
		s.flying[id] = append(s.flying[id], done)
	}
}

// land ends id's flight, typed or not, and returns the Done functions of
// the copies that followed it.
func (s *ids) land(id string, typed bool) []func(Status, string) {
	if id == "" {
		return nil
	}
	extra := s.flying[id]
	delete(s.flying, id)
	if typed && !s.typed[id] {
		s.typed[id] = true
		s.order = append(s.order, id)
		if len(s.order) > typedKeep {
			delete(s.typed, s.order[0])
			s.order = s.order[1:]
		}
	}
	return extra
}

// both returns a Done that calls a, then b (either may be nil).
func both(a, b func(Status, string)) func(Status, string) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(st Status, reason string) {
		a(st, reason)
		b(st, reason)
	}
}
