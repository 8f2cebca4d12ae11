package platform

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"
)

// A CreateFunction or UpdateFunctionCode body is JSON with the package inside as one base64
// string (Code.ZipFile, or ZipFile), up to 70 MB. Reading it whole and then decoding it held
// the body, the string and the zip in memory at once (a 900 MiB body left the platform at
// 3–4 GiB resident). Instead the body is split as it arrives: the ZipFile string is decoded on
// the fly into a staging file, and only the rest (a few KiB of settings, with "" in the
// ZipFile's place) is kept to be unmarshalled as before. encoding/json's Decoder cannot help
// here: it holds a whole string token in memory.

var (
	errZipTwice  = errors.New("ZipFile given twice")
	errBadBase64 = errors.New("ZipFile is not base64")
)

// upload is a package being written to the staging directory as its request arrives. It is
// handed to the core as CreateFunctionInput.Code; the store adopts the file instead of copying
// it (store.stage).
type upload struct {
	f       *os.File
	h       hash.Hash
	n       int64
	limit   int64 // bytes the package may have: maxZippedBytes inline, more from S3 (s3code.go)
	tooBig  error // the answer beyond limit
	adopted bool  // the store took the file
	rewound bool
}

func (s functionStore) newUpload() (*upload, error) {
	if err := os.MkdirAll(s.stagingDir(), 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.stagingDir(), "code-*.zip")
	if err != nil {
		return nil, err
	}
	return &upload{f: f, h: sha256.New(), limit: maxZippedBytes,
		tooBig: tooLarge("Zipped size must be smaller than 52428800 bytes")}, nil
}

func (u *upload) Write(p []byte) (int, error) {
	if u.n+int64(len(p)) > u.limit {
		return 0, u.tooBig
	}
	n, err := u.f.Write(p)
	u.h.Write(p[:n])
	u.n += int64(n)
	return n, err
}

// Read makes an upload an io.Reader, as CreateFunctionInput.Code is; the store never reads it
// (it adopts the file), but any other reader gets the package.
func (u *upload) Read(p []byte) (int, error) {
	if !u.rewound {
		if _, err := u.f.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
		u.rewound = true
	}
	return u.f.Read(p)
}

// finish syncs and closes the file and describes it as a staged package.
func (u *upload) finish() (*stagedCode, error) {
	u.adopted = true
	err := u.f.Sync()
	if cerr := u.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(u.f.Name())
		return nil, err
	}
	return &stagedCode{path: u.f.Name(), size: u.n, sha256: codeSha256(u.h.Sum(nil))}, nil
}

// discard removes the file unless the store adopted it (then the staged package's own discard
// or commit looks after it).
func (u *upload) discard() {
	if u != nil && !u.adopted {
		u.f.Close()
		os.Remove(u.f.Name())
	}
}

// readCodeRequest reads a code request's body: the package at zipPath into a staging file
// (nil when the body has no such string), the rest into v. op names the operation in AWS's
// request-size message; rc is the response's controller, for the body's deadlines.
func (p *Platform) readCodeRequest(rc *http.ResponseController, r *http.Request, op string, zipPath []string, v any) (*upload, error) {
	body := newTimedBody(rc, r, bodyStallTimeout, bodyTotalTimeout)
	defer body.done()
	requestTooLarge := tooLarge("Request must be smaller than 70167211 bytes for the " + op + " operation")
	if r.ContentLength > maxCodeRequestBytes {
		body.drain()
		return nil, requestTooLarge
	}
	up, err := p.store.newUpload()
	if err != nil {
		return nil, err
	}
	up, err = readCodeBody(body, up, zipPath, v, requestTooLarge)
	if err != nil {
		body.drain()
	}
	return up, err
}

// readCodeBody splits body into the package (into up) and the rest (into v); on an error, or
// when the body has no package, up is discarded and nil returned.
func readCodeBody(body io.Reader, up *upload, zipPath []string, v any, requestTooLarge error) (_ *upload, err error) {
	defer func() {
		if err != nil {
			up.discard()
		}
	}()
	sp := &jsonSplitter{zipPath: zipPath, zip: &base64Writer{dst: up}}
	n, err := io.Copy(sp, io.LimitReader(body, maxCodeRequestBytes+1))
	if n > maxCodeRequestBytes {
		return nil, requestTooLarge
	}
	if err == nil {
		err = sp.close()
	}
	switch {
	case errors.Is(err, errZipTwice):
		return nil, errInvalid("%s: %v", strings.Join(zipPath, "."), err)
	case errors.Is(err, errBadBase64):
		return nil, errInvalid("%s must be a base64-encoded zip file", strings.Join(zipPath, "."))
	case err != nil:
		var ae *apiError
		var te *errBodyTimeout
		var pe *os.PathError // the staging file: the platform's fault, a ServiceException
		if errors.As(err, &ae) || errors.As(err, &te) || errors.As(err, &pe) {
			return nil, err
		}
		return nil, errInvalid("could not read the request: %v", err)
	}
	if err := json.Unmarshal(sp.rest.Bytes(), v); err != nil {
		return nil, errInvalid("malformed JSON: %v", err)
	}
	if !sp.found {
		up.discard()
		return nil, nil
	}
	return up, nil
}

// jsonSplitter is a push scanner of one JSON document: it copies the document to rest, except
// the contents of the string at zipPath (object keys matched without regard to case, as
// encoding/json matches them), which it unescapes into zip. It tracks only what it needs to
// find that string (nesting, keys, string boundaries); json.Unmarshal of rest judges validity.
type jsonSplitter struct {
	zipPath []string
	zip     io.WriteCloser
	rest    bytes.Buffer
	found   bool

	stack    []jsonFrame
	inString bool
	isKey    bool // the string being read is an object key
	diverted bool // the string being read is the package
	escape   []byte
	key      []byte // raw text of the key being read, up to maxKeyLen
	keyLong  bool
}

type jsonFrame struct {
	object  bool
	wantKey bool
	key     string // the current member's key, unescaped
}

const maxKeyLen = 256 // keys longer than this are nothing the platform looks for

func (s *jsonSplitter) keep(b ...byte) error {
	if s.rest.Len()+len(b) > maxRequestFields {
		return tooLarge("the request's fields besides the ZipFile must be smaller than 1048576 bytes (a limit of the local platform)")
	}
	s.rest.Write(b)
	return nil
}

func (s *jsonSplitter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if s.inString {
			if s.diverted && len(s.escape) == 0 {
				// Fast path through the package: hand over everything up to the next quote or
				// backslash in one piece.
				j := bytes.IndexAny(p[i:], `"\`)
				if j < 0 {
					j = len(p) - i
				}
				if j > 0 {
					if _, err := s.zip.Write(p[i : i+j]); err != nil {
						return i, err
					}
					i += j - 1
					continue
				}
			}
			if err := s.stringByte(c); err != nil {
				return i, err
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
			top := s.top()
			s.isKey = top != nil && top.object && top.wantKey
			if s.isKey {
				s.key, s.keyLong = s.key[:0], false
			} else if s.atZipPath() {
				if s.found {
					return i, errZipTwice
				}
				s.found, s.diverted = true, true
			}
		case '{', '[':
			s.stack = append(s.stack, jsonFrame{object: c == '{', wantKey: c == '{'})
		case '}', ']':
			if len(s.stack) > 0 {
				s.stack = s.stack[:len(s.stack)-1]
			}
		case ',':
			if top := s.top(); top != nil && top.object {
				top.wantKey = true
			}
		}
		if err := s.keep(c); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// stringByte takes one byte inside a string (after its opening quote).
func (s *jsonSplitter) stringByte(c byte) error {
	if len(s.escape) > 0 || c == '\\' {
		s.escape = append(s.escape, c)
		if !escapeComplete(s.escape) {
			return nil
		}
		esc := s.escape
		s.escape = s.escape[:0]
		if s.diverted {
			_, err := s.zip.Write(unescape(esc))
			return err
		}
		if s.isKey {
			s.addKey(esc...)
		}
		return s.keep(esc...)
	}
	if c == '"' {
		s.inString = false
		if s.diverted {
			s.diverted = false
			return s.keep('"') // the package's place in rest: ""
		}
		if s.isKey {
			top := s.top()
			top.wantKey = false
			top.key = ""
			if !s.keyLong {
				var k string
				if json.Unmarshal(append(append([]byte{'"'}, s.key...), '"'), &k) == nil {
					top.key = k
				}
			}
		}
		return s.keep(c)
	}
	if s.diverted {
		_, err := s.zip.Write([]byte{c})
		return err
	}
	if s.isKey {
		s.addKey(c)
	}
	return s.keep(c)
}

func (s *jsonSplitter) addKey(b ...byte) {
	if len(s.key)+len(b) > maxKeyLen {
		s.keyLong = true
		return
	}
	s.key = append(s.key, b...)
}

func (s *jsonSplitter) top() *jsonFrame {
	if len(s.stack) == 0 {
		return nil
	}
	return &s.stack[len(s.stack)-1]
}

// atZipPath says whether a value starting now is the package's: every enclosing container an
// object, their current keys zipPath.
func (s *jsonSplitter) atZipPath() bool {
	if len(s.stack) != len(s.zipPath) {
		return false
	}
	for i, f := range s.stack {
		if !f.object || f.wantKey || !strings.EqualFold(f.key, s.zipPath[i]) {
			return false
		}
	}
	return true
}

// close ends the document: the package's decoding must be complete.
func (s *jsonSplitter) close() error {
	if s.inString && s.diverted {
		return errInvalid("malformed JSON: unterminated string")
	}
	return s.zip.Close()
}

func escapeComplete(e []byte) bool {
	if len(e) < 2 {
		return false
	}
	if e[1] == 'u' {
		return len(e) == 6
	}
	return true
}

// unescape decodes one JSON escape (\n, \/, \u0041 …); a malformed one decodes to U+FFFD,
// which base64 then refuses.
func unescape(e []byte) []byte {
	switch e[1] {
	case 'b':
		return []byte{'\b'}
	case 'f':
		return []byte{'\f'}
	case 'n':
		return []byte{'\n'}
	case 'r':
		return []byte{'\r'}
	case 't':
		return []byte{'\t'}
	case 'u':
		var r rune
		for _, h := range e[2:] {
			switch {
			case h >= '0' && h <= '9':
				r = r<<4 | rune(h-'0')
			case h >= 'a' && h <= 'f':
				r = r<<4 | rune(h-'a'+10)
			case h >= 'A' && h <= 'F':
				r = r<<4 | rune(h-'A'+10)
			default:
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(nil, r)
	default: // \" \\ \/ and anything else: the character itself
		return e[1:2]
	}
}

// base64Writer decodes standard base64 (padded, as encoding/base64.StdEncoding.DecodeString
// took it before: line breaks ignored) written to it in pieces of any size.
type base64Writer struct {
	dst    io.Writer
	buf    []byte // undecoded input, less than one chunk
	out    []byte
	padded bool // a quantum with '=' was decoded: nothing may follow
}

const base64Chunk = 32 << 10 // a multiple of 4

func (b *base64Writer) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == '\r' || c == '\n' {
			continue
		}
		if b.padded {
			return 0, errBadBase64
		}
		b.buf = append(b.buf, c)
		if len(b.buf) == base64Chunk {
			if err := b.flush(b.buf); err != nil {
				return 0, err
			}
			b.buf = b.buf[:0]
		}
	}
	return len(p), nil
}

func (b *base64Writer) flush(q []byte) error {
	if len(q) == 0 {
		return nil
	}
	if cap(b.out) < base64.StdEncoding.DecodedLen(len(q)) {
		b.out = make([]byte, base64.StdEncoding.DecodedLen(base64Chunk))
	}
	n, err := base64.StdEncoding.Decode(b.out[:cap(b.out)], q)
	if err != nil {
		return errBadBase64
	}
	if q[len(q)-1] == '=' {
		b.padded = true
	}
	_, err = b.dst.Write(b.out[:n])
	return err
}

// Close decodes what is left; a tail that is not a whole quantum is not base64.
func (b *base64Writer) Close() error {
	if len(b.buf)%4 != 0 {
		return errBadBase64
	}
	err := b.flush(b.buf)
	b.buf = b.buf[:0]
	return err
}

// checkPackage refuses, at upload as Lambda does, a package that is not a zip or that unzips to
// more than maxUnzippedBytes. The sizes its central directory declares are summed first (a zip
// bomb is refused without inflating it); then every file is inflated and counted, because
// headers can lie (archive/zip refuses data longer than declared, but the count does not rely
// on that) and a corrupt entry is better refused now than at every cold start.
func checkPackage(path string) error {
	r, err := zip.OpenReader(path)
	if err != nil {
		return errCouldNotUnzip()
	}
	defer r.Close()
	var declared uint64
	for _, f := range r.File {
		if f.UncompressedSize64 > maxUnzippedBytes-declared {
			return errUnzippedTooLarge()
		}
		declared += f.UncompressedSize64
	}
	budget := int64(maxUnzippedBytes)
	for _, f := range r.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return errCouldNotUnzip()
		}
		sum := crc32.NewIEEE()
		err = copyBudget(sum, rc, &budget)
		rc.Close()
		var invalid *invalidParameterError
		if errors.As(err, &invalid) {
			return err
		}
		// archive/zip checks the CRC only when the header's is not zero, so data corrupted
		// under a zeroed CRC passed; the central directory's CRC is always the file's.
		if err != nil || sum.Sum32() != f.CRC32 {
			return errCouldNotUnzip()
		}
	}
	return nil
}

// errCouldNotUnzip is Lambda's answer to a package it cannot unzip.
func errCouldNotUnzip() error {
	return errInvalid("Could not unzip uploaded file. Please check your file, then try to upload again.")
}
