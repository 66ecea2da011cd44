package codec

// SymbolTable is an FSST symbol table (§7.7): up to 255 symbols of 1..8
// bytes. Its serialized form is always 2312 bytes.
type SymbolTable struct {
	n    int
	sym  [256]uint64
	slen [256]uint8
}

// SymbolTableSize is the size of a serialized symbol table.
const SymbolTableSize = 2312
