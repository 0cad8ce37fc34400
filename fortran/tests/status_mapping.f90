! The Fortran module against the library: every status a bad input gets reaches Fortran as the right named
! constant, values of several types and ranks round-trip, and the mirrored structs match the C ABI.
! Run as 1 server + 1 or more clients: scripts/oshrun.sh -np 3 build/fortran/shmemcache_fortran_status_mapping
! Prints "<role>: N passed, M failed" per PE; exit status 1 if any check failed.
program status_mapping
  use, intrinsic :: iso_c_binding
  use shmemcache
  implicit none

  interface
    integer(c_size_t) function sizeof_config() bind(C, name="shmemcache_test_sizeof_config")
      import :: c_size_t
    end function
    integer(c_size_t) function sizeof_stats() bind(C, name="shmemcache_test_sizeof_stats")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_spill_dir() bind(C, name="shmemcache_test_offsetof_spill_dir")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_spill_mmap_max_bytes() &
        bind(C, name="shmemcache_test_offsetof_spill_mmap_max_bytes")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_max_outstanding() bind(C, name="shmemcache_test_offsetof_max_outstanding")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_op_timeout_ms() bind(C, name="shmemcache_test_offsetof_op_timeout_ms")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_direct_policy() bind(C, name="shmemcache_test_offsetof_direct_policy")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_local_access() bind(C, name="shmemcache_test_offsetof_local_access")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_mget_policy() bind(C, name="shmemcache_test_offsetof_mget_policy")
      import :: c_size_t
    end function
    integer(c_size_t) function offsetof_oversubscribed() bind(C, name="shmemcache_test_offsetof_oversubscribed")
      import :: c_size_t
    end function
    integer(c_int) function c_constant(name) bind(C, name="shmemcache_test_constant")
      import :: c_int, c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end function
  end interface

  type point
    real(c_float) :: x, y
    integer(c_int) :: id
  end type point

  type(shmemcache_t) :: cache, none
  type(shmemcache_config_t), target :: config
  type(shmemcache_stats_t) :: stats
  integer(c_int) :: status
  integer :: passed = 0, failed = 0
  character(len=16) :: role = 'before init'

  call check_abi_and_text()
  call check_config_errors()

  status = shmemcache_init(cache)
  if (status /= SHMEMCACHE_OK) then
    print '(a, a, 1x, a)', 'status_mapping: init failed: ', shmemcache_strerror(status), shmemcache_last_error()
    error stop 1
  end if
  if (shmemcache_is_server(cache)) then
    role = 'server'
    call expect(shmemcache_client_rank(cache) == -1, 'client_rank on a server is -1')
    call expect_status(shmemcache_set(cache, 'k', 1), SHMEMCACHE_WRONG_ROLE, 'set on a server')
    call expect_status(shmemcache_delete(cache, 'k'), SHMEMCACHE_WRONG_ROLE, 'delete on a server')
    call expect_status(shmemcache_serve(cache), SHMEMCACHE_OK, 'serve')
  else
    write (role, '(a, i0)') 'client ', shmemcache_client_rank(cache)
    call client_checks()
  end if
  call expect_status(shmemcache_finalize(cache), SHMEMCACHE_OK, 'finalize')
  call expect_status(shmemcache_set(cache, 'k', 1), SHMEMCACHE_SHUT_DOWN, 'set after finalize')
  call expect_status(shmemcache_serve(cache), SHMEMCACHE_SHUT_DOWN, 'serve after finalize')
  call expect_status(shmemcache_get_stats(cache, stats), SHMEMCACHE_OK, 'get_stats after finalize')
  if (.not. shmemcache_is_server(cache)) call expect(stats%sets >= 10, 'stats%sets counts the sets')
  call shmemcache_destroy(cache)
  call expect_status(shmemcache_set(cache, 'k', 1), SHMEMCACHE_INVALID_ARGUMENT, 'set after destroy')

  print '(a, a, a, i0, a, i0, a)', 'status_mapping: ', trim(role), ': ', passed, ' passed, ', failed, ' failed'
  if (failed > 0) error stop 1

contains

  subroutine check_abi_and_text()
    integer(c_int) :: s, t
    call expect(c_sizeof(config) == sizeof_config(), 'shmemcache_config_t has the size of the C struct')
    call expect(c_sizeof(stats) == sizeof_stats(), 'shmemcache_stats_t has the size of the C struct')
    call expect(offset(c_loc(config%spill_dir)) == offsetof_spill_dir(), 'config%spill_dir at its C offset')
    call expect(offset(c_loc(config%spill_mmap_max_bytes)) == offsetof_spill_mmap_max_bytes(), &
                'config%spill_mmap_max_bytes at its C offset')
    call expect(offset(c_loc(config%max_outstanding)) == offsetof_max_outstanding(), &
                'config%max_outstanding at its C offset')
    call expect(offset(c_loc(config%op_timeout_ms)) == offsetof_op_timeout_ms(), &
                'config%op_timeout_ms at its C offset')
    call expect(offset(c_loc(config%direct_policy)) == offsetof_direct_policy(), &
                'config%direct_policy at its C offset')
    call expect(offset(c_loc(config%local_access)) == offsetof_local_access(), &
                'config%local_access at its C offset')
    call expect(offset(c_loc(config%mget_policy)) == offsetof_mget_policy(), &
                'config%mget_policy at its C offset')
    call expect(offset(c_loc(config%oversubscribed)) == offsetof_oversubscribed(), &
                'config%oversubscribed (the last field) at its C offset')
    do s = SHMEMCACHE_OK, SHMEMCACHE_NOT_SUPPORTED
      call expect(len(shmemcache_strerror(s)) > 0 .and. shmemcache_strerror(s) /= 'unknown status', &
                  'strerror of every status')
      do t = SHMEMCACHE_OK, s - 1
        call expect(shmemcache_strerror(s) /= shmemcache_strerror(t), 'each status has its own text')
      end do
    end do
    call expect(shmemcache_strerror(SHMEMCACHE_NOT_SUPPORTED + 1000) == 'unknown status', 'strerror of a bad value')
    ! Each named constant against the C enum, by name (abi_sizes.c), appended statuses included; and no C status
    ! after the last one this module names (one appended to shmemcache.h needs its Fortran constant).
    call same(SHMEMCACHE_OK, 'OK')
    call same(SHMEMCACHE_NOT_FOUND, 'NOT_FOUND')
    call same(SHMEMCACHE_INVALID_ARGUMENT, 'INVALID_ARGUMENT')
    call same(SHMEMCACHE_KEY_TOO_LONG, 'KEY_TOO_LONG')
    call same(SHMEMCACHE_VALUE_TOO_LARGE, 'VALUE_TOO_LARGE')
    call same(SHMEMCACHE_BUFFER_TOO_SMALL, 'BUFFER_TOO_SMALL')
    call same(SHMEMCACHE_NO_SPACE, 'NO_SPACE')
    call same(SHMEMCACHE_WRONG_ROLE, 'WRONG_ROLE')
    call same(SHMEMCACHE_IN_PROGRESS, 'IN_PROGRESS')
    call same(SHMEMCACHE_IO_ERROR, 'IO_ERROR')
    call same(SHMEMCACHE_CONFIG_ERROR, 'CONFIG_ERROR')
    call same(SHMEMCACHE_SHUT_DOWN, 'SHUT_DOWN')
    call same(SHMEMCACHE_EXISTS, 'EXISTS')
    call same(SHMEMCACHE_NOT_STORED, 'NOT_STORED')
    call same(SHMEMCACHE_NOT_NUMERIC, 'NOT_NUMERIC')
    call same(SHMEMCACHE_TIMEOUT, 'TIMEOUT')
    call same(SHMEMCACHE_WRONG_THREAD, 'WRONG_THREAD')
    call same(SHMEMCACHE_NOT_SUPPORTED, 'NOT_SUPPORTED')
    call same(SHMEMCACHE_MODE_SET, 'MODE_SET')
    call same(SHMEMCACHE_MODE_ADD, 'MODE_ADD')
    call same(SHMEMCACHE_MODE_REPLACE, 'MODE_REPLACE')
    call same(SHMEMCACHE_MODE_APPEND, 'MODE_APPEND')
    call same(SHMEMCACHE_MODE_PREPEND, 'MODE_PREPEND')
    call expect(shmemcache_strerror(SHMEMCACHE_NOT_SUPPORTED + 1) == 'unknown status', &
                'no C status after SHMEMCACHE_NOT_SUPPORTED (a new one needs its Fortran constant)')
  end subroutine check_abi_and_text

  subroutine same(fortran_value, name)
    integer(c_int), intent(in) :: fortran_value
    character(len=*), intent(in) :: name
    call expect(fortran_value == c_constant(name // c_null_char), 'SHMEMCACHE_' // name // ' has its C value')
  end subroutine same

  integer(c_size_t) function offset(field)
    type(c_ptr), intent(in) :: field
    offset = transfer(field, 0_c_intptr_t) - transfer(c_loc(config), 0_c_intptr_t)
  end function offset

  ! Collective like every shmemcache_init (a PE whose configuration is bad still takes part, so that every PE
  ! fails together): every PE runs this at the same point. The failed init leaves the runtime running for the
  ! next one.
  subroutine check_config_errors()
    type(shmemcache_config_t) :: bad
    call expect_status(shmemcache_config_defaults(config), SHMEMCACHE_OK, 'config_defaults')
    call expect(config%num_servers == 1 .and. config%server_memory_bytes == 64 * 1024**2 .and. &
                config%hash_sets == 0 .and. config%hash_ways == 8 .and. config%max_key_len == 250 .and. &
                config%max_value_len == 1024**2 .and. config%slab_growth_factor == 1.25_c_double .and. &
                config%max_outstanding == 64 .and. config%op_timeout_ms == 60000 .and. config%local_access == -1 .and. &
                config%spill_mmap_max_bytes == 0 .and. &
                .not. c_associated(config%spill_dir), &
                'config_defaults gives the documented defaults')
    bad = config
    bad%num_servers = 0
    call expect_status(shmemcache_init(none, bad), SHMEMCACHE_CONFIG_ERROR, 'init with num_servers = 0')
    call expect(len(shmemcache_last_error()) > 0, 'last_error says why init failed')
    call expect(.not. c_associated(none%handle), 'no handle after a failed init')
    call expect_status(shmemcache_set(none, 'k', 1), SHMEMCACHE_INVALID_ARGUMENT, 'set without a handle')
    call expect_status(shmemcache_serve(none), SHMEMCACHE_INVALID_ARGUMENT, 'serve without a handle')
  end subroutine check_config_errors

  subroutine client_checks()
    character(len=:), allocatable :: prefix, long_key
    real(c_double) :: field(20, 30), field_out(20, 30), small(10)
    integer(c_int8_t), allocatable :: too_large(:)
    integer(c_int) :: scalar, scalar_out
    character(len=11) :: text, text_out
    character(len=3) :: words(4), words_out(4)
    type(point) :: points(5), points_out(5)
    real(c_double), target :: wide(10, 4)
    real(c_double), allocatable, asynchronous :: async_out(:)
    integer(c_size_t) :: value_len
    type(shmemcache_request_t) :: request, empty_request
    integer :: i, j

    prefix = 'fortran:' // trim(role) // ':'
    call expect(shmemcache_client_rank(cache) >= 0, 'client_rank on a client')
    call expect(shmemcache_num_clients(cache) >= 1, 'num_clients')

    ! bad input -> its status constant
    call expect_status(shmemcache_serve(cache), SHMEMCACHE_WRONG_ROLE, 'serve on a client')
    call expect_status(shmemcache_set(cache, '', 1), SHMEMCACHE_INVALID_ARGUMENT, 'set with an empty key')
    call expect_status(shmemcache_get(cache, '', scalar_out), SHMEMCACHE_INVALID_ARGUMENT, 'get with an empty key')
    call expect_status(shmemcache_delete(cache, ''), SHMEMCACHE_INVALID_ARGUMENT, 'delete with an empty key')
    long_key = prefix // repeat('k', 250)
    call expect_status(shmemcache_set(cache, long_key, 1), SHMEMCACHE_KEY_TOO_LONG, 'set with a key too long')
    call expect_status(shmemcache_get(cache, long_key, scalar_out), SHMEMCACHE_KEY_TOO_LONG, 'get, key too long')
    allocate (too_large(1024**2 + 1))
    too_large = 1
    call expect_status(shmemcache_set(cache, prefix // 'big', too_large), SHMEMCACHE_VALUE_TOO_LARGE, &
                       'set with a value too large')
    call expect_status(shmemcache_get(cache, prefix // 'big', scalar_out, value_len), SHMEMCACHE_NOT_FOUND, &
                       'a refused set stores nothing')
    call expect(value_len == 0, 'NOT_FOUND gives value_len 0')
    call expect_status(shmemcache_delete(cache, prefix // 'absent'), SHMEMCACHE_NOT_FOUND, 'delete of an absent key')

    ! values of several types and ranks
    field = reshape([(real(i, c_double) / 7, i = 1, size(field))], shape(field))
    call expect_status(shmemcache_set(cache, prefix // 'field', field), SHMEMCACHE_OK, 'set a 2-D real array')
    call expect_status(shmemcache_get(cache, prefix // 'field', field_out, value_len), SHMEMCACHE_OK, 'get it')
    call expect(value_len == c_sizeof(field) .and. all(field_out == field), '2-D real array round trip')
    small = -1
    call expect_status(shmemcache_get(cache, prefix // 'field', small, value_len), SHMEMCACHE_BUFFER_TOO_SMALL, &
                       'get into a buffer too small')
    call expect(value_len == c_sizeof(field) .and. all(small == -1), 'BUFFER_TOO_SMALL: size needed, buffer unchanged')

    scalar = 123456
    call expect_status(shmemcache_set(cache, prefix // 'scalar', scalar), SHMEMCACHE_OK, 'set a scalar')
    call expect_status(shmemcache_get(cache, prefix // 'scalar', scalar_out, value_len), SHMEMCACHE_OK, 'get it')
    call expect(scalar_out == scalar .and. value_len == 4, 'integer scalar round trip')

    text = 'hello world'
    call expect_status(shmemcache_set(cache, prefix // 'text', text), SHMEMCACHE_OK, 'set a string')
    call expect_status(shmemcache_get(cache, prefix // 'text', text_out, value_len), SHMEMCACHE_OK, 'get it')
    call expect(text_out == text .and. value_len == 11, 'character scalar round trip (len bytes)')
    words = ['abc', 'def', 'ghi', 'jkl']
    call expect_status(shmemcache_set(cache, prefix // 'words', words), SHMEMCACHE_OK, 'set a string array')
    call expect_status(shmemcache_get(cache, prefix // 'words', words_out, value_len), SHMEMCACHE_OK, 'get it')
    call expect(all(words_out == words) .and. value_len == 12, 'character array round trip')

    points = [(point(real(i), -real(i), i), i = 1, 5)]
    call expect_status(shmemcache_set(cache, prefix // 'points', points), SHMEMCACHE_OK, 'set a derived type')
    call expect_status(shmemcache_get(cache, prefix // 'points', points_out, value_len), SHMEMCACHE_OK, 'get it')
    call expect(value_len == 60 .and. all(points_out%id == points%id) .and. all(points_out%y == points%y), &
                'derived-type array round trip')

    wide = reshape([(real(i, c_double), i = 1, 40)], shape(wide))
    call expect_status(shmemcache_set(cache, prefix // 'row', wide(2, :)), SHMEMCACHE_INVALID_ARGUMENT, &
                       'set a non-contiguous section')
    call expect_status(shmemcache_set(cache, prefix // 'row', [wide(2, :)]), SHMEMCACHE_OK, 'set a copy of it')
    call expect_status(shmemcache_get(cache, prefix // 'row', small(1:4), value_len), SHMEMCACHE_OK, 'get it')
    call expect(all(small(1:4) == wide(2, :)) .and. value_len == 32, 'section copy round trip')
    call expect_status(shmemcache_get(cache, prefix // 'row', wide(3, :), value_len), SHMEMCACHE_INVALID_ARGUMENT, &
                       'get into a non-contiguous section')
    call expect(all(wide(3, :) /= wide(2, :)), 'the section is unchanged')
    call expect_status(shmemcache_get(cache, prefix // 'row', wide(:, 3), value_len), SHMEMCACHE_OK, &
                       'get into a contiguous section (a column)')
    call expect(all(wide(1:4, 3) == small(1:4)) .and. value_len == 32, 'column section round trip')
    call expect_status(shmemcache_bset(cache, prefix // 'row', wide(2, :), request), SHMEMCACHE_INVALID_ARGUMENT, &
                       'bset of a non-contiguous section')
    call expect_status(shmemcache_set(cache, prefix // 'empty', small(1:0)), SHMEMCACHE_OK, 'set an empty array')
    call expect_status(shmemcache_get(cache, prefix // 'empty', small, value_len), SHMEMCACHE_OK, 'get it')
    call expect(value_len == 0, 'empty value round trip')

    call expect_status(shmemcache_delete(cache, prefix // 'scalar'), SHMEMCACHE_OK, 'delete')
    call expect_status(shmemcache_get(cache, prefix // 'scalar', scalar_out), SHMEMCACHE_NOT_FOUND, 'get after delete')

    ! non-blocking
    call expect_status(shmemcache_bset(cache, prefix // 'nb', field(:, 1), request), SHMEMCACHE_OK, 'bset')
    call expect_status(shmemcache_wait(cache, request), SHMEMCACHE_OK, 'wait for bset')
    allocate (async_out(20))
    call expect_status(shmemcache_bget(cache, prefix // 'nb', async_out, request), SHMEMCACHE_OK, 'bget')
    status = shmemcache_test(cache, request)
    call expect(status == SHMEMCACHE_OK .or. status == SHMEMCACHE_IN_PROGRESS, 'test: OK or IN_PROGRESS')
    call expect_status(shmemcache_wait(cache, request, value_len), SHMEMCACHE_OK, 'wait for bget')
    call expect(value_len == 160 .and. all(async_out == field(:, 1)), 'bget round trip')
    call expect_status(shmemcache_wait(cache, request), SHMEMCACHE_INVALID_ARGUMENT, 'a second wait')
    call expect_status(shmemcache_wait(cache, empty_request), SHMEMCACHE_INVALID_ARGUMENT, 'wait on no request')
    call expect_status(shmemcache_bget(cache, prefix // 'absent', async_out, request), SHMEMCACHE_OK, 'bget a miss')
    call expect_status(shmemcache_wait(cache, request, value_len), SHMEMCACHE_NOT_FOUND, 'wait: NOT_FOUND')
    call expect_status(shmemcache_bget(cache, prefix // 'field', async_out, request), SHMEMCACHE_OK, 'bget big')
    call expect_status(shmemcache_wait(cache, request, value_len), SHMEMCACHE_BUFFER_TOO_SMALL, &
                       'wait: BUFFER_TOO_SMALL')
    call expect(value_len == c_sizeof(field), 'wait: the size needed')
    call expect_status(shmemcache_bget(cache, prefix // 'row', wide(1, :), request), SHMEMCACHE_INVALID_ARGUMENT, &
                       'bget into a non-contiguous section')
    call expect_status(shmemcache_bget(cache, '', async_out, request), SHMEMCACHE_INVALID_ARGUMENT, 'bget, empty key')
    call expect_status(shmemcache_bset(cache, long_key, 1, request), SHMEMCACHE_KEY_TOO_LONG, 'bset, key too long')

    do j = 1, 10
      call expect_status(shmemcache_set(cache, prefix // 'count', j), SHMEMCACHE_OK, 'set in a loop')
    end do
  end subroutine client_checks

  subroutine expect_status(got, wanted, what)
    integer(c_int), intent(in) :: got, wanted
    character(len=*), intent(in) :: what
    if (got /= wanted) then
      print '(a, a, a, a, a, a, a, a)', 'status_mapping: ', trim(role), ': FAILED: ', what, ': got ', &
        shmemcache_strerror(got), ', expected ', shmemcache_strerror(wanted)
    end if
    call expect(got == wanted, what, quiet=.true.)
  end subroutine expect_status

  subroutine expect(condition, what, quiet)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    logical, intent(in), optional :: quiet
    if (condition) then
      passed = passed + 1
    else
      failed = failed + 1
      if (.not. present(quiet)) print '(a, a, a, a)', 'status_mapping: ', trim(role), ': FAILED: ', what
    end if
  end subroutine expect

end program status_mapping
