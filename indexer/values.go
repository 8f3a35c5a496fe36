package indexer

import "strings"

// The values a key is filed under in one index are remembered as one string, so that
// the common case — exactly one value, like a namespace or a node name — costs a
// string header and nothing else: the value itself, usually a substring of the object
// the store holds anyway.
//
// Every other case (no value, several values, or one value that itself begins with
// the mark) is encoded after the mark "\x00" as a length-prefixed sequence:
//
//	["a"]          → "a"
//	[]             → "\x00"
//	["a", "bc"]    → "\x00" 1 "a" 2 "bc"      (lengths as uvarints)
//	["\x00x"]      → "\x00" 2 "\x00x"
//
// Why not keep the IndexFunc's []string: a slice header is 24 bytes and its array
// another allocation, for every key in every index — with two indexes that was 80
// bytes a key, more than client-go's whole per-key overhead.
const multiMark = "\x00"

// encodeValues returns the one-string form of values.
func encodeValues(values []string) string {
	if len(values) == 1 && !strings.HasPrefix(values[0], multiMark) {
		return values[0]
	}
	if len(values) == 0 {
		return multiMark
	}
	var b strings.Builder
	n := len(multiMark)
	for _, v := range values {
		n += uvarintLen(len(v)) + len(v)
	}
	b.Grow(n)
	b.WriteString(multiMark)
	for _, v := range values {
		for l := uint(len(v)); ; l >>= 7 {
			if l < 0x80 {
				b.WriteByte(byte(l))
				break
			}
			b.WriteByte(byte(l) | 0x80)
		}
		b.WriteString(v)
	}
	return b.String()
}

func uvarintLen(l int) int {
	n := 1
	for ; l >= 0x80; l >>= 7 {
		n++
	}
	return n
}

// decodeValues appends the values encoded in s to dst. The values are substrings of s:
// decoding allocates nothing but what dst may need to grow.
//
// Invariant: s was produced by encodeValues (the table never stores anything else),
// so the lengths are well formed.
func decodeValues(s string, dst []string) []string {
	if !strings.HasPrefix(s, multiMark) {
		return append(dst, s)
	}
	s = s[len(multiMark):]
	for len(s) > 0 {
		var l, shift uint
		i := 0
		for ; ; i++ {
			c := s[i]
			l |= uint(c&0x7f) << shift
			if c < 0x80 {
				break
			}
			shift += 7
		}
		s = s[i+1:]
		dst = append(dst, s[:l])
		s = s[l:]
	}
	return dst
}

// encodedEqual reports whether values encode to enc, without encoding them in the
// common case of one value: the fast path of every update.
func encodedEqual(enc string, values []string) bool {
	if len(values) == 1 && !strings.HasPrefix(values[0], multiMark) {
		return enc == values[0]
	}
	if !strings.HasPrefix(enc, multiMark) {
		return false
	}
	var buf [8]string
	return sameValues(decodeValues(enc, buf[:0]), values)
}
