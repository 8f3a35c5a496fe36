package listwatch

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/reflector"
)

// A protobuf LIST response is one enveloped list (see protoenvelope.go): the magic,
// then a runtime.Unknown whose field 1 is the TypeMeta and whose field 2 holds the
// list message — its ListMeta in field 1, then every item, each a length-delimited
// field 2. Everything arrives in that order, and every length is written before
// the bytes it counts.
//
// decodeListStream reads that structure as it comes off the connection and
// unmarshals each item, in turn, from a buffer reused for the next one. Reading the
// whole body first (client-go's Request.Do does, with io.ReadAll) holds it all at
// once, plus the garbage of the buffer doubling up to its size; unmarshalling the
// list message then builds its Items array, from which each item is copied into an
// allocation of its own. For 100,000 Pods that is several hundred MB the
// streaming decoder never allocates.
//
// client-go: tools/pager/pager.go ListPager.ListWithAlloc and
// apimachinery/pkg/api/meta/help.go ExtractListWithAlloc (the same result: each item
// in an allocation of its own)

// streamsList reports whether list, a generated Kubernetes list type, has the field
// layout decodeListStream relies on: ListMeta as protobuf field 1, Items as the
// repeated field 2. Every generated list has it; a type without it is decoded
// whole.
func streamsList(list any) bool {
	t := reflect.TypeOf(list)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	tag := func(name string) string {
		f, ok := t.Elem().FieldByName(name)
		if !ok {
			return ""
		}
		return f.Tag.Get("protobuf")
	}
	return strings.HasPrefix(tag("ListMeta"), "bytes,1,") && strings.HasPrefix(tag("Items"), "bytes,2,rep,")
}

// errNotThisList means the body is not a protobuf list of the codec's kind (a Status,
// another media type): decodeListStream hands such a body to decodeList whole.
var errNotThisList = errors.New("not a protobuf list of this kind")

// decodeListStream decodes a LIST response body as it is read. It reads body to its
// end or to the first error.
func (c *codec[T]) decodeListStream(body io.Reader) (reflector.ListResult[T], error) {
	br := bufio.NewReaderSize(body, 64<<10)
	var seen bytes.Buffer // what was read before the stream was recognised
	res, err := c.readList(io.TeeReader(br, &seen), br)
	if errors.Is(err, errNotThisList) {
		rest, readErr := io.ReadAll(br)
		if readErr != nil {
			return reflector.ListResult[T]{}, fmt.Errorf("read list: %w", readErr)
		}
		return c.decodeList(append(seen.Bytes(), rest...))
	}
	if err != nil {
		return reflector.ListResult[T]{}, fmt.Errorf("decode list: %w", err)
	}
	return res, nil
}

// readList reads the envelope through head (which records what it reads, for the
// fallback) and, once the envelope is recognised, the items through br directly.
func (c *codec[T]) readList(head io.Reader, br *bufio.Reader) (reflector.ListResult[T], error) {
	var res reflector.ListResult[T]
	magic := make([]byte, len(protobufMagic))
	if _, err := io.ReadFull(head, magic); err != nil || !bytes.Equal(magic, protobufMagic) {
		return res, errNotThisList
	}
	hr := byteReader{head}
	// Unknown field 1: the TypeMeta, before the list.
	typeMeta, err := readField(hr, head, 1, 1<<10)
	if err != nil {
		return res, errNotThisList
	}
	var apiVersion, kind []byte
	if eachField(typeMeta, func(num int, v []byte) error {
		switch num {
		case 1:
			apiVersion = v
		case 2:
			kind = v
		}
		return nil
	}) != nil || string(kind) != c.fast.listKind || string(apiVersion) != c.fast.apiVersion {
		return res, errNotThisList
	}
	// Unknown field 2: the list message, whose length is known up front.
	tag, err := binary.ReadUvarint(hr)
	if err != nil || tag != 2<<3|2 {
		return res, errNotThisList
	}
	size, err := binary.ReadUvarint(hr)
	if err != nil {
		return res, errNotThisList
	}
	// From here on the body is ours: read the list without recording it.
	list := &countingReader{r: br, left: size}
	var item []byte
	for list.left > 0 {
		tag, err := binary.ReadUvarint(list)
		if err != nil {
			return res, err
		}
		num, wireType := tag>>3, tag&7
		if wireType != 2 {
			return res, fmt.Errorf("%w: list field %d has wire type %d", errMalformedProtobuf, num, wireType)
		}
		n, err := binary.ReadUvarint(list)
		if err != nil {
			return res, err
		}
		if n > list.left || n > maxFrameBytes {
			return res, fmt.Errorf("%w: a %d-byte field with %d bytes left", errMalformedProtobuf, n, list.left)
		}
		if uint64(cap(item)) < n {
			item = make([]byte, n)
		}
		item = item[:n]
		if _, err := io.ReadFull(list, item); err != nil {
			return res, err
		}
		switch num {
		case 1:
			var meta metav1.ListMeta
			if err := meta.Unmarshal(item); err != nil {
				return res, err
			}
			res.ResourceVersion, res.Continue = meta.ResourceVersion, meta.Continue
			if meta.ShardInfo != nil {
				res.ShardSelector = meta.ShardInfo.Selector
			}
		case 2:
			obj := c.newObject()
			if err := any(obj).(unmarshaler).Unmarshal(item); err != nil {
				return res, fmt.Errorf("item %d: %w", len(res.Items), err)
			}
			res.Items = append(res.Items, obj)
		}
	}
	// Unknown fields 3 and 4 (content encoding and type) follow; both are empty on
	// every apiserver. A content encoding would mean the bytes above were not the
	// list itself.
	for {
		tag, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		v, err := readValue(br, br, tag, 1<<10)
		if err != nil {
			return res, err
		}
		if tag>>3 == 3 && len(v) > 0 {
			return res, fmt.Errorf("unsupported content encoding %q", v)
		}
	}
}

// readField reads one length-delimited field, which must have number num and at most
// max bytes.
func readField(br io.ByteReader, r io.Reader, num uint64, max uint64) ([]byte, error) {
	tag, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if tag>>3 != num {
		return nil, errMalformedProtobuf
	}
	return readValue(br, r, tag, max)
}

// readValue reads the value of a length-delimited field whose tag was just read.
func readValue(br io.ByteReader, r io.Reader, tag uint64, max uint64) ([]byte, error) {
	if tag&7 != 2 {
		return nil, errMalformedProtobuf
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errMalformedProtobuf
	}
	v := make([]byte, n)
	_, err = io.ReadFull(r, v)
	return v, err
}

// byteReader reads one byte at a time from r (a TeeReader over a bufio.Reader, so
// each call is cheap).
type byteReader struct{ r io.Reader }

func (b byteReader) ReadByte() (byte, error) {
	var one [1]byte
	_, err := io.ReadFull(b.r, one[:])
	return one[0], err
}

// countingReader reads at most left bytes of r, counting them down.
type countingReader struct {
	r    *bufio.Reader
	left uint64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	if uint64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= uint64(n)
	if err == io.EOF && c.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	if c.left == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	b, err := c.r.ReadByte()
	if err == nil {
		c.left--
	} else if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return b, err
}
