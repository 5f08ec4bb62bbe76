package imaging

import (
	"image"
	"image/jpeg"
)

// EncodeJPEG appends the baseline JPEG encoding of img at the given quality
// (1 to 100; 0 or less means image/jpeg's default, 75; above 100 means 100)
// to dst and returns the extended slice. Alpha is ignored: the colour bytes
// are encoded as they are, which for captured screens, always opaque, is
// the picture. img may be a sub-image.
//
// It is image/jpeg writing straight into dst, so a pooled dst (see
// [Buffer]) makes the encoding allocation-light.
func EncodeJPEG(dst []byte, img *image.RGBA, quality int) ([]byte, error) {
	if img.Rect.Empty() {
		return dst, ErrEmptyImage
	}
	if img.Rect.Dx() > 65535 || img.Rect.Dy() > 65535 {
		return dst, ErrTooLarge
	}
	if quality <= 0 {
		quality = jpeg.DefaultQuality
	}
	w := appender{b: dst}
	err := jpeg.Encode(&w, img, &jpeg.Options{Quality: min(quality, 100)})
	return w.b, err
}

// appender collects what it is written. It has the Flush and WriteByte
// methods image/jpeg looks for, which spares a bufio.Writer per encoding.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func (a *appender) WriteByte(c byte) error {
	a.b = append(a.b, c)
	return nil
}

func (a *appender) Flush() error { return nil }
