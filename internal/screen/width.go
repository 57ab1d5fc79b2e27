package screen

//go:generate go run gen_width.go

// runeWidth returns the number of columns r takes (0, 1 or 2), or -1 for a
// code point wcwidth calls unprintable (tmux on Linux drops those), from a
// table generated from glibc's wcwidth(3) as tmux uses it.
func runeWidth(r rune) int {
	if r < 0x300 {
		if r < 0xa0 && r >= 0x7f {
			return -1
		}
		return 1
	}
	if r >= 0x110000 {
		return -1
	}
	blk := int(widthIndex[r>>8])
	i := int(r & 0xff)
	w := int(widthBlocks[blk*64+i/4]>>(2*(i%4))) & 3
	if w == 3 {
		return -1
	}
	return w
}
