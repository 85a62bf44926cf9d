package models

// blocks is memory that values are carved from, in blocks that never move
// (pointers into a carved value stay valid), and that reset makes free again
// for the next use without allocating it anew.
type blocks[T any] struct {
	all [][]T
	at  int // the block carved from: all[at]
}

// blockMax is the size of a block, unless a value needs more.
const blockMax = 256

// carve returns n contiguous values, with no room to append: zero the first
// time, afterwards what the use before reset left in them (overwrite them).
func (b *blocks[T]) carve(n int) []T {
	for b.at < len(b.all) && cap(b.all[b.at])-len(b.all[b.at]) < n {
		b.at++
	}
	if b.at == len(b.all) {
		size := 8
		if b.at > 0 {
			size = min(2*cap(b.all[b.at-1])+8, blockMax)
		}
		b.all = append(b.all, make([]T, 0, max(size, n)))
	}
	blk := b.all[b.at]
	at := len(blk)
	blk = blk[:at+n]
	b.all[b.at] = blk
	return blk[at : at+n : at+n]
}

// reset frees every value carved so far: they must no longer be used.
func (b *blocks[T]) reset() {
	for i := range b.all {
		b.all[i] = b.all[i][:0]
	}
	b.at = 0
}
