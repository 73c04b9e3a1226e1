package loaders

import (
	"context"

	"github.com/graph-gophers/dataloader/v7"
)

// batchNow answers keys with a loader's own batch function, at once, for a
// gqlgen batch resolver, which gets all the sibling parents of a list in
// one call and so knows every key before it asks: the loader's window (1 ms
// by default) would only add its wait, a batch goroutine, a timer and a
// thunk per key. The batch functions read through the operation's memos, so
// the upstream calls are the loader's own; each answer primes the loader,
// so a later Load of the key in the operation reads nothing more. Repeated
// keys are asked for once. errs[i] is keys[i]'s error. The batch runs on
// one of w's workers: the batch resolver is called on the goroutine gqlgen
// starts for a list element, which would otherwise grow its small stack
// for the call and the decoding of its answer.
func batchNow[K comparable, V any](ctx context.Context, w *Workers, l *Loader[K, V], keys []K) (vals []V, errs []error) {
	at := make(map[K]int, len(keys))
	distinct := make([]K, 0, len(keys))
	for _, k := range keys {
		if _, ok := at[k]; !ok {
			at[k] = len(distinct)
			distinct = append(distinct, k)
		}
	}
	var res []*dataloader.Result[V]
	w.Do(func() { res = l.batch(ctx, distinct) })
	vals, errs = make([]V, len(keys)), make([]error, len(keys))
	for i, k := range keys {
		j := at[k]
		if j >= len(res) || res[j] == nil {
			errs[i] = errShortBatch
			continue
		}
		vals[i], errs[i] = res[j].Data, res[j].Error
	}
	for j, k := range distinct {
		if j < len(res) && res[j] != nil && res[j].Error == nil {
			l.Prime(ctx, k, res[j].Data)
		}
	}
	return vals, errs
}

const errShortBatch = loaderError("loaders: a batch answered fewer keys than it was asked")
