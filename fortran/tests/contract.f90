! memcached's contract (issue 15) through the Fortran module: store modes, flags, CAS tokens, fetch, touch, incr,
! batches (mset/mget: hits, misses, too-small slots, explicit key lengths, bad input), flush_all, server_stats,
! and their statuses. Run as 1 server + 1 client (flush_all empties every server):
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
  integer(c_int) :: statuses(2)

  status = shmemcache_init(cache)
  call check(status == SHMEMCACHE_OK, 'init')
  if (shmemcache_is_server(cache)) then
    status = shmemcache_store(cache, 'k', 'v')
    call check(status == SHMEMCACHE_WRONG_ROLE, 'store on a server: WRONG_ROLE')
    statuses = -1
    status = shmemcache_mset(cache, ['k1', 'k2'], 'ab', statuses)
    call check(status == SHMEMCACHE_WRONG_ROLE .and. all(statuses == -1), 'mset on a server: WRONG_ROLE')
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
    call batches()
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
    statuses = -1
    status = shmemcache_mget(cache, ['f:n', 'f:k'], back, statuses)
    call check(status == SHMEMCACHE_SHUT_DOWN .and. all(statuses == -1), 'mget after finalize: SHUT_DOWN')
  end if
  if (shmemcache_is_server(cache)) then
    print '(a, i0, a, i0, a)', 'server: ', passed, ' passed, ', failed, ' failed'
  else
    print '(a, i0, a, i0, a)', 'client: ', passed, ' passed, ', failed, ' failed'
  end if
  call shmemcache_destroy(cache)
  if (failed > 0) error stop 1

contains

  ! mset/mget: 8 arrays under 8 keys, read back with 2 absent keys among them, into slots that fit and slots that
  ! are too small; keys whose trailing blanks count (key_lens); every kind of bad call.
  subroutine batches()
    integer, parameter :: n_keys = 8
    character(len=8) :: keys(n_keys), mixed(n_keys + 2)
    real(c_double) :: values(4, n_keys), read_back(4, n_keys + 2), small(2, n_keys)
    integer(c_int) :: st(n_keys), st_mixed(n_keys + 2), one(1)
    integer(c_size_t) :: lens(n_keys + 2), one_len(1)
    character(len=4) :: text(2)
    integer :: i
    do i = 1, n_keys
      write (keys(i), '(a, i0)') 'b:key', i
      values(:, i) = [real(c_double) :: i, 10 * i, 100 * i, -i]
    end do
    st = -1
    status = shmemcache_mset(cache, keys, values, st)
    call check(status == SHMEMCACHE_OK .and. all(st == SHMEMCACHE_OK), 'mset of 8 arrays: OK each')
    ! Absent keys at both ends, the stored ones in between, reversed.
    mixed(1) = 'b:none1'
    mixed(2:n_keys + 1) = keys(n_keys:1:-1)
    mixed(n_keys + 2) = 'b:none2'
    read_back = -1
    status = shmemcache_mget(cache, mixed, read_back, st_mixed, lens)
    call check(status == SHMEMCACHE_OK, 'mget: OK')
    call check(st_mixed(1) == SHMEMCACHE_NOT_FOUND .and. st_mixed(n_keys + 2) == SHMEMCACHE_NOT_FOUND .and. &
               lens(1) == 0 .and. lens(n_keys + 2) == 0 .and. all(read_back(:, 1) == -1), 'mget: misses')
    call check(all(st_mixed(2:n_keys + 1) == SHMEMCACHE_OK) .and. all(lens(2:n_keys + 1) == 32), 'mget: hits')
    call check(all(read_back(:, 2:n_keys + 1) == values(:, n_keys:1:-1)), 'mget: each value in its slot')
    ! Slots of 16 bytes for values of 32: BUFFER_TOO_SMALL with the size needed, slots unchanged.
    small = -1
    status = shmemcache_mget(cache, keys, small, st, lens(1:n_keys))
    call check(status == SHMEMCACHE_OK .and. all(st == SHMEMCACHE_BUFFER_TOO_SMALL) .and. &
               all(lens(1:n_keys) == 32) .and. all(small == -1), 'mget into small slots: BUFFER_TOO_SMALL')
    ! key_lens: the trailing blank of 'b:sp ' is part of that key.
    text = ['one ', 'two ']
    status = shmemcache_mset(cache, ['b:sp ', 'b:sp2'], text, statuses, key_lens=[5_c_size_t, 5_c_size_t])
    call check(status == SHMEMCACHE_OK .and. all(statuses == SHMEMCACHE_OK), 'mset with key_lens')
    buffer = ''
    status = shmemcache_get(cache, 'b:sp ', buffer, n)
    call check(status == SHMEMCACHE_OK .and. buffer(1:n) == 'one ', 'the blank is part of the key')
    status = shmemcache_get(cache, 'b:sp', buffer, n)
    call check(status == SHMEMCACHE_NOT_FOUND, 'without it, another key')
    ! Per-item bad input: an empty key gets INVALID_ARGUMENT, the other item is stored.
    status = shmemcache_mset(cache, ['b:ok', '    '], text, statuses)
    call check(status == SHMEMCACHE_OK .and. statuses(1) == SHMEMCACHE_OK .and. &
               statuses(2) == SHMEMCACHE_INVALID_ARGUMENT, 'an empty key: INVALID_ARGUMENT for its item only')
    ! Bad calls: nothing processed, statuses unchanged.
    statuses = -1
    status = shmemcache_mset(cache, ['b:x1', 'b:x2'], 'abc', statuses)
    call check(status == SHMEMCACHE_INVALID_ARGUMENT .and. all(statuses == -1), '3 bytes for 2 keys: INVALID_ARGUMENT')
    status = shmemcache_mset(cache, ['b:x1', 'b:x2'], values(1, 1:4), statuses)
    call check(status == SHMEMCACHE_INVALID_ARGUMENT .and. all(statuses == -1), 'a non-contiguous section')
    status = shmemcache_mset(cache, keys, values, statuses)
    call check(status == SHMEMCACHE_INVALID_ARGUMENT .and. all(statuses == -1), 'statuses of another size')
    status = shmemcache_mget(cache, ['b:x1', 'b:x2'], back, statuses, key_lens=[9_c_size_t, 1_c_size_t])
    call check(status == SHMEMCACHE_INVALID_ARGUMENT .and. all(statuses == -1), 'a key length over len(keys)')
    status = shmemcache_mget(cache, ['b:x1', 'b:x2'], back, statuses, value_lens=one_len)
    call check(status == SHMEMCACHE_INVALID_ARGUMENT .and. all(statuses == -1), 'value_lens of another size')
    status = shmemcache_get(cache, 'b:x1', buffer, n)
    call check(status == SHMEMCACHE_NOT_FOUND, 'bad calls stored nothing')
    ! One key, and none.
    status = shmemcache_mget(cache, ['b:key3'], back, one, one_len)
    call check(status == SHMEMCACHE_OK .and. one(1) == SHMEMCACHE_OK .and. one_len(1) == 32 .and. &
               all(back == values(:, 3)), 'mget of one key')
    status = shmemcache_mget(cache, keys(1:0), back(1:0), st(1:0))
    call check(status == SHMEMCACHE_OK, 'mget of no key: OK')
  end subroutine batches

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
