package storage

// MessageTypes returns one value of every message type the storage and its
// clients send, so that a fault schedule can be checked for a delay whose
// "match" names a type that is never sent.
func MessageTypes() []any { return []any{ReadReq{}, WriteReq{}, Reply{}} }
