package screen

//go:generate go run gen_width.go

// runeWidth returns the number of columns r takes (0, 1 or 2), from a table
// generated from glibc's wcwidth(3) as tmux uses it; code points wcwidth
// calls unprintable count as 1, as in tmux.
func runeWidth(r rune) int {
	if r < 0x300 {
		return 1
	}
	if r >= 0x110000 {
		return 1
	}
	blk := int(widthIndex[r>>8])
	i := int(r & 0xff)
	return int(widthBlocks[blk*64+i/4]>>(2*(i%4))) & 3
}
