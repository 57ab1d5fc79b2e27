package screen

import "github.com/charmbracelet/x/ansi"

// Color is a cell colour: [DefaultColor], a palette index ([PaletteColor])
// or a 24-bit colour ([RGBColor]). The top byte holds the kind and the low
// bytes the index or the red, green and blue values.
type Color uint32

// Kinds of colour in the top byte of a [Color].
const (
	// DefaultColor is the terminal's default foreground or background.
	DefaultColor Color = 0
	colorPalette Color = 1 << 24
	colorRGB     Color = 2 << 24
)

// PaletteColor returns palette colour n (0-255; 0-7 normal, 8-15 bright).
func PaletteColor(n uint8) Color { return colorPalette | Color(n) }

// RGBColor returns a 24-bit colour.
func RGBColor(r, g, b uint8) Color {
	return colorRGB | Color(r)<<16 | Color(g)<<8 | Color(b)
}

// IsDefault reports whether c is the default colour.
func (c Color) IsDefault() bool { return c == DefaultColor }

// Palette returns the palette index of c and whether c is a palette colour.
func (c Color) Palette() (uint8, bool) { return uint8(c), c&0xff000000 == colorPalette }

// RGB returns the red, green and blue values of c and whether c is a
// 24-bit colour.
func (c Color) RGB() (r, g, b uint8, ok bool) {
	return uint8(c >> 16), uint8(c >> 8), uint8(c), c&0xff000000 == colorRGB
}

// sgr applies Select Graphic Rendition parameters to the pen.
func (s *Screen) sgr(ps ansi.Params) {
	if len(ps) == 0 {
		s.pen = cell{}
		return
	}
	p := &s.pen
	for i := 0; i < len(ps); i++ {
		n := ps[i].Param(0)
		if ps[i].HasMore() && n != 38 && n != 48 && n != 58 && n != 4 {
			// Unknown colon sub-parameters: skip the group.
			for i < len(ps) && ps[i].HasMore() {
				i++
			}
			continue
		}
		switch {
		case n == 0:
			*p = cell{}
		case n == 1:
			p.attr |= attrBold
		case n == 2:
			p.attr |= attrFaint
		case n == 3:
			p.attr |= attrItalic
		case n == 4:
			style := 1
			if ps[i].HasMore() {
				i++
				style = ps[i].Param(0)
				for i < len(ps) && ps[i].HasMore() {
					i++
				}
			}
			if style == 0 {
				p.attr &^= attrUnderline
			} else {
				p.attr |= attrUnderline
			}
		case n == 5 || n == 6:
			p.attr |= attrBlink
		case n == 7:
			p.attr |= attrReverse
		case n == 8:
			p.attr |= attrHidden
		case n == 9:
			p.attr |= attrStrike
		case n == 21:
			p.attr |= attrUnderline
		case n == 22:
			p.attr &^= attrBold | attrFaint
		case n == 23:
			p.attr &^= attrItalic
		case n == 24:
			p.attr &^= attrUnderline
		case n == 25:
			p.attr &^= attrBlink
		case n == 27:
			p.attr &^= attrReverse
		case n == 28:
			p.attr &^= attrHidden
		case n == 29:
			p.attr &^= attrStrike
		case n >= 30 && n <= 37:
			p.fg = PaletteColor(uint8(n - 30))
		case n == 39:
			p.fg = DefaultColor
		case n >= 40 && n <= 47:
			p.bg = PaletteColor(uint8(n - 40))
		case n == 49:
			p.bg = DefaultColor
		case n >= 90 && n <= 97:
			p.fg = PaletteColor(uint8(n - 90 + 8))
		case n >= 100 && n <= 107:
			p.bg = PaletteColor(uint8(n - 100 + 8))
		case n == 38 || n == 48 || n == 58:
			var c Color
			var ok bool
			c, ok, i = extendedColor(ps, i)
			if ok {
				switch n {
				case 38:
					p.fg = c
				case 48:
					p.bg = c
				}
			}
		}
	}
}

// extendedColor parses the colour after 38, 48 or 58 at ps[i], in either
// the colon form (38:5:n, 38:2::r:g:b, 38:2:r:g:b) or the semicolon form
// (38;5;n, 38;2;r;g;b). It returns the colour, whether it is valid, and the
// index of the last parameter it used.
func extendedColor(ps ansi.Params, i int) (Color, bool, int) {
	if ps[i].HasMore() {
		var sub [6]int
		n := 0
		j := i + 1
		for ; j < len(ps); j++ {
			if n < len(sub) {
				sub[n] = ps[j].Param(-1)
				n++
			}
			if !ps[j].HasMore() {
				break
			}
		}
		end := min(j, len(ps)-1)
		if n == 0 {
			return 0, false, end
		}
		switch sub[0] {
		case 5:
			if n >= 2 && sub[1] >= 0 && sub[1] <= 255 {
				return PaletteColor(uint8(sub[1])), true, end
			}
		case 2:
			rgb := sub[1:n]
			if len(rgb) >= 4 {
				rgb = rgb[1:4] // colour space id first
			}
			if len(rgb) == 3 && valid8(rgb[0]) && valid8(rgb[1]) && valid8(rgb[2]) {
				return RGBColor(uint8(rgb[0]), uint8(rgb[1]), uint8(rgb[2])), true, end
			}
		}
		return 0, false, end
	}
	if i+1 >= len(ps) {
		return 0, false, i
	}
	switch ps[i+1].Param(-1) {
	case 5:
		if i+2 >= len(ps) {
			return 0, false, len(ps) - 1
		}
		v := ps[i+2].Param(-1)
		if v < 0 || v > 255 {
			return 0, false, i + 2
		}
		return PaletteColor(uint8(v)), true, i + 2
	case 2:
		if i+4 >= len(ps) {
			return 0, false, len(ps) - 1
		}
		r, g, b := ps[i+2].Param(-1), ps[i+3].Param(-1), ps[i+4].Param(-1)
		if !valid8(r) || !valid8(g) || !valid8(b) {
			return 0, false, i + 4
		}
		return RGBColor(uint8(r), uint8(g), uint8(b)), true, i + 4
	}
	return 0, false, i + 1
}

func valid8(v int) bool { return v >= 0 && v <= 255 }
