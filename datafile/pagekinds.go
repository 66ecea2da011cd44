package datafile

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// Kinds names the structural layout and every compression of a 2.1+ page
// (lance-file-format-2.1.md §4–§7), sorted and without repeats: the layout
// ("mini-block", "full-zip", "constant", "blob"), then each
// CompressiveEncoding variant met anywhere in it ("flat", "fsst",
// "byte_stream_split", "rle", …; "general" as "general:zstd" /
// "general:lz4", a flat buffer compression as "flat:zstd"), so that tests
// and tools can tell which encodings a writer chose. 2.0 pages, whose
// encodings are ArrayEncoding trees, are ErrUnsupported.
func (p *Page) Kinds() ([]string, error) {
	if n := p.Encoding.TypeName(); n != pageLayoutType {
		return nil, fmt.Errorf("datafile: page encoding %q is not a 2.1+ PageLayout: %w", p.Encoding.TypeURL, ErrUnsupported)
	}
	var pl pb21.PageLayout
	if err := proto.Unmarshal(p.Encoding.Value, &pl); err != nil {
		return nil, fmt.Errorf("datafile: PageLayout: %v: %w", err, ErrMalformed)
	}
	var out []string
	switch pl.Layout.(type) {
	case *pb21.PageLayout_MiniBlockLayout:
		out = append(out, "mini-block")
		if mb := pl.GetMiniBlockLayout(); mb.GetDictionary() != nil {
			out = append(out, "mini-block-dictionary")
		}
	case *pb21.PageLayout_FullZipLayout:
		out = append(out, "full-zip")
	case *pb21.PageLayout_ConstantLayout:
		out = append(out, "constant")
	case *pb21.PageLayout_BlobLayout:
		out = append(out, "blob")
	default:
		out = append(out, "unknown")
	}
	var walk func(m protoreflect.Message, depth int)
	walk = func(m protoreflect.Message, depth int) {
		if depth > 64 {
			return
		}
		if ce, ok := m.Interface().(*pb21.CompressiveEncoding); ok && ce.Compression != nil {
			od := m.Descriptor().Oneofs().ByName("compression")
			if fd := m.WhichOneof(od); fd != nil {
				name := string(fd.Name())
				switch {
				case ce.GetGeneral() != nil:
					name += ":" + scheme(ce.GetGeneral().GetCompression().GetScheme())
				case ce.GetFlat().GetData() != nil:
					name += ":" + scheme(ce.GetFlat().GetData().GetScheme())
				}
				out = append(out, name)
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Kind() != protoreflect.MessageKind:
			case fd.IsList():
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message(), depth+1)
				}
			case !fd.IsMap():
				walk(v.Message(), depth+1)
			}
			return true
		})
	}
	walk(pl.ProtoReflect(), 0)
	slices.Sort(out[1:])
	return slices.Compact(out), nil
}

func scheme(s pb21.CompressionScheme) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "COMPRESSION_ALGORITHM_"))
}
