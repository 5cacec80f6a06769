package rt

// This file is a stand-in until the allocator's AllocSite.Alloc is merged:
// delete it at that merge.

// Alloc allocates n elements of T for the site on q's context. The stand-in
// allocates directly from the driver, without the site's tag.
func (s *AllocSite[T]) Alloc(q *Queue, n int) (Buffer[T], error) {
	if _, err := s.Info(); err != nil {
		return Buffer[T]{}, err
	}
	return NewBuffer[T](q.ctx, n)
}
