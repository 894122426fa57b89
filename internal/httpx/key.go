package httpx

import (
	"context"
	"errors"
	"net/url"

	"github.com/fanyi-go/translate"
)

// KeyFunc returns the current credential. Adapters take it through their WithKeyFunc
// option so that a rotated key applies without a restart.
type KeyFunc func(context.Context) (string, error)

// Key is an adapter's credential: a fixed string, or a KeyFunc read before every call. The
// zero value is an empty fixed key. It is safe for concurrent use when its KeyFunc is.
type Key struct {
	static string
	fn     KeyFunc
}

// NewKey returns a Key that reads fn before every call, or is static when fn is nil.
func NewKey(static string, fn KeyFunc) Key { return Key{static: static, fn: fn} }

// Static reports whether the key never changes (no KeyFunc).
func (k Key) Static() bool { return k.fn == nil }

// Empty reports whether there is no key at all: no KeyFunc and an empty static key.
func (k Key) Empty() bool { return k.fn == nil && k.static == "" }

// Get returns the current key. A KeyFunc that fails is KindUnauthorized (or the context's
// own error when ctx is done); a KeyFunc that returns "" is KindUnauthorized. The KeyFunc's
// error text is kept, with any URL query removed (it may come from a secret store's HTTP
// call), cut to 512 bytes.
func (k Key) Get(ctx context.Context, engine string) (string, error) {
	if k.fn == nil {
		return k.static, nil
	}
	key, err := k.fn(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return "", TransportError(ctx, engine, err)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = TransportError(ctx, engine, err)
		}
		return "", &translate.Error{Kind: translate.KindUnauthorized, Engine: engine,
			Message: "key func: " + Truncate(Redact(err.Error(), k.static), 512)}
	}
	if key == "" {
		return "", &translate.Error{Kind: translate.KindUnauthorized, Engine: engine,
			Message: "key func returned an empty key"}
	}
	return key, nil
}

// WithKey runs call with the current key. When call fails with KindUnauthorized and the
// key comes from a KeyFunc, WithKey reads the key once more and, if it changed (the key was
// rotated while the call was made with the old one), runs call once more with the new key.
// Otherwise it returns call's error. A static key is never re-read.
//
// call must build its request afresh on every run (a body reader is consumed by the first).
func WithKey[T any](ctx context.Context, k Key, engine string, call func(key string) (T, error)) (T, error) {
	var zero T
	key, err := k.Get(ctx, engine)
	if err != nil {
		return zero, err
	}
	v, err := call(key)
	if err == nil || k.fn == nil || translate.KindOf(err) != translate.KindUnauthorized || ctx.Err() != nil {
		return v, err
	}
	fresh, ferr := k.Get(ctx, engine)
	if ferr != nil || fresh == key {
		return v, err
	}
	return call(fresh)
}
