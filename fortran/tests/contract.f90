! memcached's contract (issue 15) through the Fortran module: store modes, flags, CAS tokens, fetch, touch, incr,
! flush_all, server_stats, and their statuses. Run as 1 server + 1 client (flush_all empties every server):
!   scripts/oshrun.sh -np 2 build/fortran/shmemcache_fortran_contract
! Prints "<role>: N passed, M failed"; exit status 1 if any check failed.
program contract
  use, intrinsic :: iso_c_binding
  use shmemcache
  implicit none

  type(shmemcache_t) :: cache
  type(shmemcache_stats_t) :: stats
  integer(c_int) :: status
  integer :: passed = 0, failed = 0
  character(len=32) :: buffer
  integer(c_size_t) :: n
  integer(c_int32_t) :: flags
  integer(c_int64_t) :: t1, t2, t3, value
  real(c_double) :: field(4), back(4)

  status = shmemcache_init(cache)
  call check(status == SHMEMCACHE_OK, 'init')
  if (shmemcache_is_server(cache)) then
    status = shmemcache_store(cache, 'k', 'v')
    call check(status == SHMEMCACHE_WRONG_ROLE, 'store on a server: WRONG_ROLE')
    status = shmemcache_serve(cache)
    call check(status == SHMEMCACHE_OK, 'serve')
  else
    status = shmemcache_store(cache, 'f:k', 'v', mode=SHMEMCACHE_MODE_REPLACE)
    call check(status == SHMEMCACHE_NOT_STORED, 'replace of an absent key: NOT_STORED')
    status = shmemcache_store(cache, 'f:k', 'mid', mode=SHMEMCACHE_MODE_ADD, flags=7_c_int32_t, cas_out=t1)
    call check(status == SHMEMCACHE_OK .and. t1 /= 0, 'add: OK with a token')
    status = shmemcache_store(cache, 'f:k', 'other', mode=SHMEMCACHE_MODE_ADD)
    call check(status == SHMEMCACHE_EXISTS, 'add of a present key: EXISTS')
    status = shmemcache_store(cache, 'f:k', '-end', mode=SHMEMCACHE_MODE_APPEND, cas_out=t2)
    call check(status == SHMEMCACHE_OK .and. t2 /= t1, 'append: a new token')
    buffer = ''
    flags = 0
    t3 = 0
    status = shmemcache_fetch(cache, 'f:k', buffer, n, flags, t3)
    call check(status == SHMEMCACHE_OK .and. buffer(1:n) == 'mid-end' .and. flags == 7 .and. t3 == t2, &
               'fetch: value, flags (kept by append), token')
    status = shmemcache_store(cache, 'f:k', 'stale', cas=t1)
    call check(status == SHMEMCACHE_EXISTS, 'stale token: EXISTS')
    status = shmemcache_store(cache, 'f:absent', 'x', cas=t1)
    call check(status == SHMEMCACHE_NOT_FOUND, 'token of an absent key: NOT_FOUND')
    status = shmemcache_store(cache, 'f:k', 'x', mode=9_c_int)
    call check(status == SHMEMCACHE_INVALID_ARGUMENT, 'mode out of range: INVALID_ARGUMENT')
    field = [1.5d0, 2.5d0, 3.5d0, 4.5d0]
    status = shmemcache_store(cache, 'f:field', field, flags=3_c_int32_t, ttl_ms=3600000_c_int64_t)
    call check(status == SHMEMCACHE_OK, 'store of an array with a TTL')
    back = 0
    status = shmemcache_fetch(cache, 'f:field', back, n, flags)
    call check(status == SHMEMCACHE_OK .and. all(back == field) .and. n == 32 .and. flags == 3, 'fetch an array')
    status = shmemcache_touch(cache, 'f:field', 0_c_int64_t)
    call check(status == SHMEMCACHE_OK, 'touch')
    status = shmemcache_touch(cache, 'f:absent', 10_c_int64_t)
    call check(status == SHMEMCACHE_NOT_FOUND, 'touch of an absent key: NOT_FOUND')
    status = shmemcache_incr(cache, 'f:k', 1_c_int64_t, value)
    call check(status == SHMEMCACHE_NOT_NUMERIC, 'incr of text: NOT_NUMERIC')
    status = shmemcache_incr(cache, 'f:absent', 1_c_int64_t, value)
    call check(status == SHMEMCACHE_NOT_FOUND, 'incr of an absent key: NOT_FOUND')
    status = shmemcache_set(cache, 'f:n', '41')
    status = shmemcache_incr(cache, 'f:n', 1_c_int64_t, value)
    call check(status == SHMEMCACHE_OK .and. value == 42, 'incr: 42')
    status = shmemcache_incr(cache, 'f:n', -100_c_int64_t, value)
    call check(status == SHMEMCACHE_OK .and. value == 0, 'decr stops at 0')
    status = shmemcache_server_stats(cache, 0_c_int, stats)
    call check(status == SHMEMCACHE_OK .and. stats%active_ops_served > 0 .and. stats%sets == 0, 'server_stats')
    status = shmemcache_server_stats(cache, 1_c_int, stats)
    call check(status == SHMEMCACHE_INVALID_ARGUMENT, 'server_stats of no such server: INVALID_ARGUMENT')
    status = shmemcache_flush_all(cache)
    call check(status == SHMEMCACHE_OK, 'flush_all')
    status = shmemcache_fetch(cache, 'f:field', back, n)
    call check(status == SHMEMCACHE_NOT_FOUND .and. n == 0, 'gone after flush_all')
  end if
  status = shmemcache_finalize(cache)
  call check(status == SHMEMCACHE_OK, 'finalize')
  if (.not. shmemcache_is_server(cache)) then
    status = shmemcache_incr(cache, 'f:n', 1_c_int64_t)
    call check(status == SHMEMCACHE_SHUT_DOWN, 'incr after finalize: SHUT_DOWN')
    status = shmemcache_flush_all(cache)
    call check(status == SHMEMCACHE_SHUT_DOWN, 'flush_all after finalize: SHUT_DOWN')
  end if
  if (shmemcache_is_server(cache)) then
    print '(a, i0, a, i0, a)', 'server: ', passed, ' passed, ', failed, ' failed'
  else
    print '(a, i0, a, i0, a)', 'client: ', passed, ' passed, ', failed, ' failed'
  end if
  call shmemcache_destroy(cache)
  if (failed > 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(a, a)', 'FAILED: ', what
    end if
  end subroutine check

end program contract
