package delivery

import "time"

// DefaultStuckAfter is how long a message may wait to be typed into its
// agent before the wrapper reports it stuck (to its sender, in presence,
// to relay doctor): 30 s.
const DefaultStuckAfter = 30 * time.Second
