package delivery

import "strings"

// fit returns how many items, from the front, make one injection of at most
// limit bytes when joined by a separator of sep bytes: always at least one
// (a single item longer than limit goes alone, whole, rather than never),
// and all of them when limit is negative (no cap).
func fit(items []Item, sep, limit int) int {
	if len(items) == 0 {
		return 0
	}
	if limit < 0 {
		return len(items)
	}
	size := len(items[0].Text)
	n := 1
	for ; n < len(items); n++ {
		size += sep + len(items[n].Text)
		if size > limit {
			break
		}
	}
	return n
}

// fitShown returns how many of items, the first always, fits allows as
// one injection (all of them when fits is nil).
func fitShown(items []Item, fits func([]string) bool) int {
	if fits == nil || len(items) < 2 {
		return len(items)
	}
	texts := make([]string, 1, len(items))
	texts[0] = items[0].Text
	for n := 1; n < len(items); n++ {
		if texts = append(texts, items[n].Text); !fits(texts) {
			return n
		}
	}
	return len(items)
}

// join is the text of one injection: the items' texts in order, sep
// between them.
func join(batch []Item, sep string) string {
	texts := make([]string, len(batch))
	for i, it := range batch {
		texts[i] = it.Text
	}
	return strings.Join(texts, sep)
}
