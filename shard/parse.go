package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a ShardSelector string a user wrote — a flag, a config file — and
// returns its shard, or an error that names the bad part and says how to fix it.
//
// Why check on the client: kube-apiserver answers a selector it cannot parse with
// HTTP 500 (an internal error, which a client retries), not 400, and with the
// feature gate off it does not parse the field at all. Parse applies the apiserver's
// rules (k8s.io/apiserver pkg/sharding Parse, v0.37.2) so the mistake shows where it
// was made:
//
//   - clauses shardRange(KEY, 'START', 'END'), joined with ||;
//   - KEY is object.metadata.uid or object.metadata.namespace, the same in every
//     clause;
//   - START and END are string literals, '0x' and exactly 16 lowercase hex digits —
//     '0x0' is refused (the field's own doc comment shows it, the server refuses it)
//     — except the end of the space, '0x10000000000000000' (2^64), the one 17-digit
//     bound;
//   - START < END.
//
// The apiserver parses the string as a CEL expression, so it also accepts spellings
// Parse does not: parentheses around a clause, double-quoted or raw string literals,
// comments. Parse refuses those with an error that shows the canonical form, the one
// Shard.String renders. Overlapping clauses are accepted, as the server accepts them,
// and merged.
func Parse(selector string) (Shard, error) {
	text := strings.TrimSpace(selector)
	if text == "" {
		return Shard{}, fmt.Errorf("empty shard selector: leave ShardSelector unset for an informer that sees every object")
	}
	var key Key
	var ranges []Range
	for i, clause := range strings.Split(text, "||") {
		k, r, err := parseClause(strings.TrimSpace(clause))
		if err != nil {
			return Shard{}, fmt.Errorf("shard selector clause %d %q: %w", i+1, strings.TrimSpace(clause), err)
		}
		if i == 0 {
			key = k
		} else if k != key {
			return Shard{}, fmt.Errorf("shard selector clause %d hashes %s, clause 1 %s: every clause must use the same key", i+1, k, key)
		}
		ranges = append(ranges, r)
	}
	return New(key, ranges...)
}

// canonical is the form a clause must take, for errors.
const canonical = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"

// parseClause reads one shardRange(KEY, 'START', 'END').
func parseClause(c string) (Key, Range, error) {
	rest, ok := strings.CutPrefix(c, "shardRange")
	if !ok {
		if c == "" {
			return "", Range{}, fmt.Errorf("empty clause (a stray ||?); want %s", canonical)
		}
		return "", Range{}, fmt.Errorf("want a shardRange(…) call such as %s; only shardRange and || are allowed", canonical)
	}
	rest = strings.TrimSpace(rest)
	inner, ok := strings.CutPrefix(rest, "(")
	if ok {
		inner, ok = strings.CutSuffix(inner, ")")
	}
	if !ok {
		return "", Range{}, fmt.Errorf("want shardRange(KEY, 'START', 'END') with its parentheses, such as %s", canonical)
	}
	args := strings.Split(inner, ",")
	if len(args) != 3 {
		return "", Range{}, fmt.Errorf("shardRange takes 3 arguments (KEY, 'START', 'END'), got %d", len(args))
	}
	key := Key(strings.TrimSpace(args[0]))
	if !key.valid() {
		hint := ""
		if key == "metadata.uid" || key == "metadata.namespace" {
			hint = fmt.Sprintf(" (did you mean %q? the path starts at object)", "object."+key)
		}
		return "", Range{}, fmt.Errorf("key %q is not one the apiserver hashes: use %s or %s%s", key, UID, Namespace, hint)
	}
	start, err := parseBound(strings.TrimSpace(args[1]), "START")
	if err != nil {
		return "", Range{}, err
	}
	end, err := parseBound(strings.TrimSpace(args[2]), "END")
	if err != nil {
		return "", Range{}, err
	}
	if start.top {
		return "", Range{}, fmt.Errorf("START '0x10000000000000000' is the end of the hash space; a range cannot start there")
	}
	if !end.top && start.v >= end.v {
		return "", Range{}, fmt.Errorf("START %s must be less than END %s", start.text, end.text)
	}
	last := end.v - 1 // end.v is 0 for the top bound: Last wraps to MaxUint64, 2^64−1
	return key, Range{Start: start.v, Last: last}, nil
}

// bound is one parsed hex bound: its value, or top for 2^64.
type bound struct {
	v    uint64
	top  bool
	text string
}

// parseBound reads 'START' or 'END': a single-quoted '0x' and 16 lowercase hex digits,
// or '0x10000000000000000'.
func parseBound(arg, name string) (bound, error) {
	if len(arg) < 2 || arg[0] != '\'' || arg[len(arg)-1] != '\'' {
		if len(arg) >= 2 && arg[0] == '"' && arg[len(arg)-1] == '"' {
			return bound{}, fmt.Errorf("%s %s: write it in single quotes, %s, as Shard.String does", name, arg, "'"+arg[1:len(arg)-1]+"'")
		}
		return bound{}, fmt.Errorf("%s %s: want a single-quoted hex string such as '0x8000000000000000'", name, arg)
	}
	s := arg[1 : len(arg)-1]
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return bound{}, fmt.Errorf("%s '%s': want a lowercase 0x prefix, as in '0x%s'", name, s, pad16(strings.TrimPrefix(s, "0X")))
	}
	if digits == "" {
		return bound{}, fmt.Errorf("%s '0x': the hex digits are missing", name)
	}
	for _, c := range digits {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			return bound{}, fmt.Errorf("%s '%s': hex digits must be lowercase: '0x%s'", name, s, strings.ToLower(digits))
		default:
			return bound{}, fmt.Errorf("%s '%s': %q is not a hex digit", name, s, c)
		}
	}
	switch {
	case len(digits) == 17:
		if s != "0x10000000000000000" {
			return bound{}, fmt.Errorf("%s '%s': the one 17-digit bound is '0x10000000000000000' (2^64, the end of the space)", name, s)
		}
		return bound{top: true, text: arg}, nil
	case len(digits) > 17:
		return bound{}, fmt.Errorf("%s '%s': %d hex digits, want 16", name, s, len(digits))
	case len(digits) != 16:
		return bound{}, fmt.Errorf("%s '%s': want exactly 16 hex digits: '0x%s'", name, s, pad16(digits))
	}
	v, err := strconv.ParseUint(digits, 16, 64)
	if err != nil {
		return bound{}, fmt.Errorf("%s '%s': %w", name, s, err)
	}
	return bound{v: v, text: arg}, nil
}

// pad16 left-pads hex digits with zeros to 16, for the fix an error suggests.
func pad16(digits string) string {
	if len(digits) >= 16 {
		return digits
	}
	return strings.Repeat("0", 16-len(digits)) + digits
}
