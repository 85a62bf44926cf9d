package history

import "testing"

// BenchmarkMaterialise is Events of a 2,000-event history recorded into a
// released log's storage (the arrays are reused, as in a sweep).
func BenchmarkMaterialise(b *testing.B) {
	log := NewLog()
	recordHistory(log, 1000, "x")
	b.ReportAllocs()
	for b.Loop() {
		log.mat, log.ints, log.uints = log.mat[:0], log.ints[:0], log.uints[:0]
		if len(log.Events()) != log.n {
			b.Fatal("short")
		}
	}
}
