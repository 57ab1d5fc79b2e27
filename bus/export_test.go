package bus

import "time"

// SetBatchWait sets how long c's inbox batches wait for a message the hub
// announced before they are handed over without it.
func SetBatchWait(c *Client, d time.Duration) { c.batchWait = d }
