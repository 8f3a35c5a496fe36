package indexer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEncodedValuesRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 300) // a length that needs two uvarint bytes
	for _, tc := range []struct {
		name   string
		values []string
		enc    string
	}{
		{"one value is itself", []string{"ns-1"}, "ns-1"},
		{"one empty value (a pending pod's node) is the empty string", []string{""}, ""},
		{"no value is the mark alone", nil, "\x00"},
		{"two values", []string{"a", "bc"}, "\x00\x01a\x02bc"},
		{"a value that starts with the mark is encoded", []string{"\x00x"}, "\x00\x02\x00x"},
		{"a long value needs a two-byte length", []string{long, "y"}, "\x00\xac\x02" + long + "\x01y"},
		{"duplicates are kept", []string{"a", "a"}, "\x00\x01a\x01a"},
		{"empty values among others", []string{"", "a", ""}, "\x00\x00\x01a\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := encodeValues(tc.values)
			assert.Equal(t, tc.enc, enc)
			got := decodeValues(enc, nil)
			if len(tc.values) == 0 {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, tc.values, got)
			}
			assert.True(t, encodedEqual(enc, tc.values))
		})
	}
}

func TestEncodedEqualTellsDifferentValuesApart(t *testing.T) {
	for _, tc := range []struct {
		stored, values []string
	}{
		{[]string{"a"}, []string{"b"}},
		{[]string{"a"}, []string{"a", "b"}},
		{[]string{"a", "b"}, []string{"b", "a"}},
		{nil, []string{""}},
		{[]string{""}, nil},
		{[]string{"\x00"}, []string{""}},
	} {
		assert.False(t, encodedEqual(encodeValues(tc.stored), tc.values), "%q against %q", tc.stored, tc.values)
	}
}

func TestDecodingTheCommonCaseAllocatesNothing(t *testing.T) {
	var buf [4]string
	enc := encodeValues([]string{"a", "b"})
	allocs := testing.AllocsPerRun(100, func() {
		_ = decodeValues(enc, buf[:0])
		_ = decodeValues("ns-1", buf[:0])
		_ = encodeValues([]string{"ns-1"})
		_ = encodedEqual("ns-1", []string{"ns-1"})
	})
	assert.Zero(t, allocs)
}

func FuzzEncodedValues(f *testing.F) {
	f.Add("a", "b", 2)
	f.Add("\x00", "", 1)
	f.Add("", "", 0)
	f.Fuzz(func(t *testing.T, a, b string, n int) {
		values := []string{a, b, a + b}[:max(0, min(n, 3))]
		got := decodeValues(encodeValues(values), nil)
		if len(values) == 0 {
			assert.Empty(t, got)
			return
		}
		assert.Equal(t, values, got)
	})
}
