package shard_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/shard"
)

// What the apiserver accepts (k8s.io/apiserver v0.37.2 pkg/sharding Parse), Parse
// accepts, with the same ranges.
func TestParseAcceptsWhatTheAPIServerAccepts(t *testing.T) {
	cases := []struct {
		in   string
		key  shard.Key
		want []shard.Range
	}{
		{"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
			shard.UID, []shard.Range{{Start: 0, Last: 0x7fffffffffffffff}}},
		{"shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
			shard.UID, []shard.Range{{Start: 0, Last: math.MaxUint64}}},
		{"shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
			shard.Namespace, []shard.Range{{Start: 0xaa, Last: 0xfe}}},
		{"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')",
			shard.UID, []shard.Range{{Start: 0, Last: 0x7fffffffffffffff}, {Start: 0xc000000000000000, Last: math.MaxUint64}}},
		// Adjacent clauses merge into one range.
		{"shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000005') || shardRange(object.metadata.uid, '0x0000000000000005', '0x000000000000000a')",
			shard.UID, []shard.Range{{Start: 0, Last: 9}}},
		{"shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')",
			shard.UID, []shard.Range{{Start: 0, Last: 0x7fffffffffffffff}}},
		{"  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  ",
			shard.UID, []shard.Range{{Start: 0, Last: 0x7fffffffffffffff}}},
	}
	for _, c := range cases {
		s, err := shard.Parse(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.key, s.Key(), c.in)
		assert.Equal(t, c.want, s.Ranges(), c.in)
	}
}

// What the apiserver refuses (with HTTP 500), Parse refuses with an error that names
// the bad part and, where there is one, the fix.
func TestParseRefusesWithAnErrorThatSaysWhy(t *testing.T) {
	cases := map[string]string{
		"":    "empty shard selector: leave ShardSelector unset",
		"   ": "empty shard selector",
		"shardRange(object.metadata.uid, '0x0', '0x8000000000000000')":                                                                                                `START '0x0': want exactly 16 hex digits: '0x0000000000000000'`,
		"shardRange(object.metadata.uid, '0x0000000000000000', '0xff')":                                                                                               `END '0xff': want exactly 16 hex digits: '0x00000000000000ff'`,
		"shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')":                                                                                   `START '0000000000000000': want a lowercase 0x prefix`,
		"shardRange(object.metadata.uid, '0x', '0x8000000000000000')":                                                                                                 `START '0x': the hex digits are missing`,
		"shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')":                                                                                `key "object.metadata.name" is not one the apiserver hashes`,
		"shardRange(metadata.uid, '0x0000000000000000', '0x8000000000000000')":                                                                                        `did you mean "object.metadata.uid"?`,
		"invalidFunc(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')":                                                                                "only shardRange and || are allowed",
		"shardRange(object.metadata.uid, '0x000000000000000000', '0x8000000000000000')":                                                                               "18 hex digits, want 16",
		"shardRange(object.metadata.uid, '0x000000000000000g', '0x8000000000000000')":                                                                                 `'g' is not a hex digit`,
		"shardRange(object.metadata.uid, '0x8000000000000000', '0xFFFFFFFFFFFFFFFF')":                                                                                 "hex digits must be lowercase: '0xffffffffffffffff'",
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') && shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')": "shardRange takes 3 arguments",
		"shardRange(object.metadata.uid, 0, 8)":                                                                                                                       "want a single-quoted hex string",
		`shardRange(object.metadata.uid, "0x0000000000000000", '0x8000000000000000')`:                                                                                 `write it in single quotes, '0x0000000000000000'`,
		"object.metadata.uid > '0x0'":                           "want a shardRange(…) call",
		"shardRange(object.metadata.uid, '0x0000000000000000')": "shardRange takes 3 arguments (KEY, 'START', 'END'), got 2",
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')": "clause 2 hashes object.metadata.namespace, clause 1 object.metadata.uid: every clause must use the same key",
		"shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')":                                                                                       "must be less than END",
		"shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')":                                                                                       "must be less than END",
		"shardRange(object.metadata.uid, '0x10000000000000000', '0x10000000000000000')":                                                                                     "a range cannot start there",
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')":                                                                                      "the one 17-digit bound is '0x10000000000000000'",
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') ||":                                                                                    "empty clause (a stray ||?)",
		"shardRange object.metadata.uid, '0x0000000000000000', '0x8000000000000000'":                                                                                        "with its parentheses",
		"(shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'))":                                                                                     "want a shardRange(…) call such as shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
	}
	for in, want := range cases {
		_, err := shard.Parse(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want, in)
		}
	}
}

// FAQ #29 quotes Parse's error for the '0x0' start the field's doc comment shows: the
// quote is the error Parse returns.
func TestTheFAQQuotesParsesErrorForTheZeroStart(t *testing.T) {
	faq, err := os.ReadFile("../docs/faq.md")
	require.NoError(t, err)
	_, err = shard.Parse("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')")
	require.Error(t, err)
	assert.Contains(t, string(faq), "```\n"+err.Error()+"\n```")
}

// Every shard Split makes, and every merged shard, survives String then Parse.
func TestParseReadsWhatStringWrites(t *testing.T) {
	for _, key := range []shard.Key{shard.UID, shard.Namespace} {
		for _, n := range []int{1, 2, 3, 4, 7, 64, 256} {
			shards, err := shard.Split(key, n)
			require.NoError(t, err)
			for _, s := range shards {
				back, err := shard.Parse(s.String())
				require.NoError(t, err, s.String())
				assert.Equal(t, s, back)
			}
		}
	}
	s, err := shard.New(shard.UID, shard.Range{Start: 0, Last: 5}, shard.Range{Start: 100, Last: math.MaxUint64})
	require.NoError(t, err)
	back, err := shard.Parse(s.String())
	require.NoError(t, err)
	assert.Equal(t, s, back)
}

// FuzzParse: Parse never panics; what it accepts is a valid shard whose rendering
// it reads back unchanged, and whose every clause had bounds of the apiserver's form.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
		"shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000') || shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000001')",
		"shardRange(object.metadata.uid, '0x0', '0x8')",
		"shardRange(,,)", "||", "shardRange(object.metadata.uid, '0x10000000000000000', '0x10000000000000000')",
		"shardRange(object.metadata.uid, '0xffffffffffffffff', '0x10000000000000000')",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := shard.Parse(in)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%q: an empty error", in)
			}
			return
		}
		if s.IsZero() || len(s.Ranges()) == 0 {
			t.Fatalf("%q: accepted as an empty shard", in)
		}
		for _, clause := range strings.Split(in, "||") {
			if !strings.Contains(clause, "'0x") {
				t.Fatalf("%q: accepted a clause without a 0x bound: %q", in, clause)
			}
		}
		back, err := shard.Parse(s.String())
		if err != nil {
			t.Fatalf("%q: its rendering %q does not parse: %v", in, s.String(), err)
		}
		if back.String() != s.String() {
			t.Fatalf("%q: %q read back as %q", in, s.String(), back.String())
		}
	})
}
