package example

import "testing"

// BenchmarkFast is faster on our side.
//
// Fair: both sides do
// the same thing.
func BenchmarkFast(b *testing.B) {}

// BenchmarkSame cannot be told apart.
//
// Fair: the same input.
func BenchmarkSame(b *testing.B) {}

// BenchmarkOffHeadline is a sanity check.
//
// Fair: the same code on both sides.
//
// Not in the headline: it runs client-go's code on both sides.
func BenchmarkOffHeadline(b *testing.B) {}
