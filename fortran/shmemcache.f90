! shmemcache — Fortran 2018 module over the C API of shmemcache (include/shmemcache/shmemcache.h), through
! iso_c_binding only. Every call is a function returning the C status (an integer(c_int) equal to one of the
! SHMEMCACHE_* parameters below), like the C API; nothing here stops the program on bad input.
!
!   use shmemcache
!   type(shmemcache_t) :: cache
!   real(c_double) :: field(100, 100)
!   integer(c_size_t) :: nbytes
!   status = shmemcache_init(cache)                        ! collective over every PE
!   if (shmemcache_is_server(cache)) then
!     status = shmemcache_serve(cache)                     ! until every client has finalized
!   else
!     status = shmemcache_set(cache, 'field:dt=0.1', field)
!     status = shmemcache_get(cache, 'field:dt=0.1', field, nbytes)
!   end if
!   status = shmemcache_finalize(cache)                    ! collective
!   call shmemcache_destroy(cache)
!
! Keys are character strings, used byte for byte: trailing blanks are part of the key, so build keys with trim().
! Values are any contiguous array or scalar of any type and rank (class(*), dimension(..)): its bytes are stored,
! size(x) * storage_size(x) / 8 of them (character values: len(x) * size(x)). Values and buffers must be
! contiguous: a non-contiguous array section gets INVALID_ARGUMENT (pass a contiguous copy, e.g. [a(2, :)], and
! copy a fetched value into the section yourself). The module checks rather than relying on the compiler's
! copy-in: gfortran 12 passes polymorphic assumed-rank sections without it.
!
! Batches: shmemcache_mset and shmemcache_mget take an array of keys and ONE contiguous array holding count
! equal-sized values (or buffers) back to back, e.g. column i of a 2-D array for key i; every item gets its own
! status (and, for mget, its value's length). Keys of an array are trimmed (len_trim) unless key_lens gives each
! one's length: a character array's elements all have one length.
!
! Non-blocking: shmemcache_bset (key and value may be reused at once) and shmemcache_bget (the key at once; the
! buffer, declared asynchronous, is written at completion) return a shmemcache_request_t; shmemcache_test and
! shmemcache_wait complete it. iset/iget are not bound: their contract (the key and value untouched until
! completion) cannot be kept for the temporaries Fortran creates for character and array arguments.
!
! Threads: as for the C API: a handle may be shared by threads, whose calls run side by side.
module shmemcache
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! shmemcache_status_t
  integer(c_int), parameter, public :: SHMEMCACHE_OK = 0
  integer(c_int), parameter, public :: SHMEMCACHE_NOT_FOUND = 1        ! no pair for that key
  integer(c_int), parameter, public :: SHMEMCACHE_INVALID_ARGUMENT = 2 ! empty key, handle not initialised, ...
  integer(c_int), parameter, public :: SHMEMCACHE_KEY_TOO_LONG = 3     ! len(key) > config%max_key_len
  integer(c_int), parameter, public :: SHMEMCACHE_VALUE_TOO_LARGE = 4  ! value bytes > config%max_value_len
  integer(c_int), parameter, public :: SHMEMCACHE_BUFFER_TOO_SMALL = 5 ! get: value_len holds the size needed
  integer(c_int), parameter, public :: SHMEMCACHE_NO_SPACE = 6         ! the server has no memory left for it
  integer(c_int), parameter, public :: SHMEMCACHE_WRONG_ROLE = 7       ! data call on a server, serve on a client
  integer(c_int), parameter, public :: SHMEMCACHE_IN_PROGRESS = 8      ! shmemcache_test: not complete yet
  integer(c_int), parameter, public :: SHMEMCACHE_IO_ERROR = 9         ! the SSD tier failed
  integer(c_int), parameter, public :: SHMEMCACHE_CONFIG_ERROR = 10    ! shmemcache_last_error() says why
  integer(c_int), parameter, public :: SHMEMCACHE_SHUT_DOWN = 11       ! the handle was finalized
  integer(c_int), parameter, public :: SHMEMCACHE_EXISTS = 12          ! add: present; CAS: changed (issue 15)
  integer(c_int), parameter, public :: SHMEMCACHE_NOT_STORED = 13      ! replace/append/prepend: absent (issue 15)
  integer(c_int), parameter, public :: SHMEMCACHE_NOT_NUMERIC = 14     ! incr: not a decimal number (issue 15)
  integer(c_int), parameter, public :: SHMEMCACHE_TIMEOUT = 15         ! a peer did not answer in op_timeout_ms
  integer(c_int), parameter, public :: SHMEMCACHE_WRONG_THREAD = 16    ! another thread, below THREAD_MULTIPLE
  integer(c_int), parameter, public :: SHMEMCACHE_NOT_SUPPORTED = 17   ! shmemcache_arm: a server cannot wake it

  ! shmemcache_mode_t (shmemcache_store)
  integer(c_int), parameter, public :: SHMEMCACHE_MODE_SET = 0      ! store unconditionally
  integer(c_int), parameter, public :: SHMEMCACHE_MODE_ADD = 1      ! only if absent, else EXISTS
  integer(c_int), parameter, public :: SHMEMCACHE_MODE_REPLACE = 2  ! only if present, else NOT_STORED
  integer(c_int), parameter, public :: SHMEMCACHE_MODE_APPEND = 3   ! after the present value, else NOT_STORED
  integer(c_int), parameter, public :: SHMEMCACHE_MODE_PREPEND = 4  ! before the present value, else NOT_STORED

  ! shmemcache_store_options_t
  type, bind(C) :: store_options_t
    integer(c_int) :: mode = SHMEMCACHE_MODE_SET
    integer(c_int32_t) :: flags = 0
    integer(c_int64_t) :: ttl_ms = 0
    integer(c_int64_t) :: cas = 0
  end type store_options_t

  ! shmemcache_mget_item_t and shmemcache_mset_item_t (shmemcache_mget / shmemcache_mset build them).
  type, bind(C) :: mget_item_t
    type(c_ptr) :: key
    integer(c_size_t) :: key_len
    type(c_ptr) :: buffer
    integer(c_size_t) :: buffer_len
    integer(c_size_t) :: value_len
    integer(c_int) :: status
  end type mget_item_t
  type, bind(C) :: mset_item_t
    type(c_ptr) :: key
    integer(c_size_t) :: key_len
    type(c_ptr) :: value
    integer(c_size_t) :: value_len
    integer(c_int) :: status
  end type mset_item_t

  ! What shmemcache_mset / shmemcache_mget hand the C API for item i (batch_layout fills it; kept until the call
  ! returns): its key at key_at(i), lens(i) bytes of key_bytes (every key's bytes back to back), and its slot of
  ! the caller's data at slot_at(i) (c_null_ptr when slots are empty), slot bytes each.
  type :: batch_t
    character(kind=c_char), allocatable :: key_bytes(:)
    type(c_ptr), allocatable :: key_at(:), slot_at(:)
    integer(c_size_t), allocatable :: lens(:)
    integer(c_size_t) :: slot = 0
  end type batch_t

  ! shmemcache_config_t, field for field (unsigned fields are integer(c_int); spill_dir: see shmemcache_init).
  type, bind(C), public :: shmemcache_config_t
    integer(c_int) :: num_servers
    integer(c_size_t) :: server_memory_bytes
    integer(c_size_t) :: hash_sets
    integer(c_int) :: hash_ways
    integer(c_size_t) :: directory_entries
    integer(c_int) :: directory_ways
    integer(c_int) :: recency_range_ms
    integer(c_size_t) :: max_key_len
    integer(c_size_t) :: max_value_len
    integer(c_size_t) :: chunk_bytes
    integer(c_int) :: chunks_per_peer
    integer(c_int) :: direct_ops
    type(c_ptr) :: spill_dir
    integer(c_size_t) :: spill_bytes
    integer(c_size_t) :: spill_mmap_max_bytes
    real(c_double) :: slab_growth_factor
    integer(c_size_t) :: slab_page_bytes
    integer(c_int) :: private_context
    integer(c_int) :: max_outstanding
    integer(c_int) :: op_timeout_ms
    integer(c_size_t) :: large_value_threshold
    integer(c_int) :: direct_policy
    integer(c_int) :: local_access
    integer(c_int) :: mget_policy
    integer(c_int) :: idle_spin_us
    integer(c_int) :: oversubscribed
  end type shmemcache_config_t

  ! shmemcache_stats_t, field for field (uint64_t counters as integer(c_int64_t)).
  type, bind(C), public :: shmemcache_stats_t
    integer(c_int64_t) :: gets, sets, deletes, get_hits, get_misses, direct_gets, active_gets, direct_sets, &
                          active_sets, directory_hits, directory_misses, read_retries, lock_retries, &
                          cas_lock_busy, cas_tag_mismatch, cas_version_mismatch, direct_fallbacks, &
                          messages_sent, messages_received, recency_updates, directory_expired, &
                          expiration_bar_updates, items, bytes_used, evictions, eviction_batches, &
                          spilled_items, spill_reads, active_ops_served, no_space_errors, retiered, &
                          max_eviction_pause_us, pages_moved, expiration_bar, payload_bytes, &
                          spill_bytes_written, spill_reclaimed_segments, spill_checksum_failures, &
                          spill_io_errors, spill_async_reads, spill_mmap_reads, &
                          spill_enospc_recoveries, large_gets_pulled, large_pull_retries, &
                          large_sets_landed, policy_active_ops, policy_set_path, policy_get_path, &
                          policy_reason, local_gets, local_sets, direct_incrs, mget_messages, &
                          mget_message_items, unchecked_copies, idle_sleeps, doorbell_wakes, &
                          cpu_word_atomics, published_epoch_gets, direct_expiry_asks, &
                          remote_gets_whole, remote_gets_head_value, remote_gets_split, &
                          large_sets_placed, large_value_copies, expired_crawled, &
                          mget_local_items, idle_spins_contended
  end type shmemcache_stats_t

  ! One handle (shmemcache_t *). Default-initialised to "no handle": every call on it gives INVALID_ARGUMENT.
  type, public :: shmemcache_t
    type(c_ptr) :: handle = c_null_ptr
  end type shmemcache_t

  ! One non-blocking request (shmemcache_request_t *), and where completion writes the value's length.
  type, public :: shmemcache_request_t
    type(c_ptr) :: handle = c_null_ptr
    integer(c_size_t), pointer :: value_len => null()
  end type shmemcache_request_t

  ! The spill_dir given to shmemcache_init, NUL-terminated, kept until the next init that is given one (the C
  ! header does not promise that init copies the string).
  character(kind=c_char, len=:), allocatable, target :: spill_dir_kept

  public :: shmemcache_strerror, shmemcache_last_error, shmemcache_config_defaults, shmemcache_init, &
            shmemcache_is_server, shmemcache_client_rank, shmemcache_num_clients, shmemcache_serve, &
            shmemcache_set, shmemcache_get, shmemcache_delete, shmemcache_bset, shmemcache_bget, &
            shmemcache_test, shmemcache_wait, shmemcache_get_stats, shmemcache_finalize, shmemcache_destroy, &
            shmemcache_value_bytes, shmemcache_store, shmemcache_fetch, shmemcache_touch, shmemcache_incr, &
            shmemcache_flush_all, shmemcache_server_stats, shmemcache_mget, shmemcache_mset

  ! ---- the C API ---------------------------------------------------------------------------------------------
  interface
    function c_strerror(status) bind(C, name="shmemcache_strerror") result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: text
    end function
    function c_last_error() bind(C, name="shmemcache_last_error") result(text)
      import :: c_ptr
      type(c_ptr) :: text
    end function
    function c_config_defaults(config) bind(C, name="shmemcache_config_defaults") result(status)
      import :: c_int, shmemcache_config_t
      type(shmemcache_config_t), intent(out) :: config
      integer(c_int) :: status
    end function
    function c_init(config, cache) bind(C, name="shmemcache_init") result(status)
      import :: c_int, c_ptr, shmemcache_config_t
      type(shmemcache_config_t), intent(in) :: config
      type(c_ptr), intent(out) :: cache
      integer(c_int) :: status
    end function
    function c_is_server(cache) bind(C, name="shmemcache_is_server") result(yes)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache
      integer(c_int) :: yes
    end function
    function c_client_rank(cache) bind(C, name="shmemcache_client_rank") result(rank)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache
      integer(c_int) :: rank
    end function
    function c_num_clients(cache) bind(C, name="shmemcache_num_clients") result(n)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache
      integer(c_int) :: n
    end function
    function c_serve(cache) bind(C, name="shmemcache_serve") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache
      integer(c_int) :: status
    end function
    function c_set(cache, key, key_len, value, value_len) bind(C, name="shmemcache_set") result(status)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      type(c_ptr), value :: value
      integer(c_size_t), value :: value_len
      integer(c_int) :: status
    end function
    function c_get(cache, key, key_len, buffer, buffer_len, value_len) bind(C, name="shmemcache_get") &
        result(status)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      type(c_ptr), value :: buffer
      integer(c_size_t), value :: buffer_len
      integer(c_size_t), intent(out) :: value_len
      integer(c_int) :: status
    end function
    function c_delete(cache, key, key_len) bind(C, name="shmemcache_delete") result(status)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      integer(c_int) :: status
    end function
    function c_bset(cache, key, key_len, value, value_len, request) bind(C, name="shmemcache_bset") &
        result(status)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      type(c_ptr), value :: value
      integer(c_size_t), value :: value_len
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function
    function c_bget(cache, key, key_len, buffer, buffer_len, value_len, request) &
        bind(C, name="shmemcache_bget") result(status)
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      type(c_ptr), value :: buffer
      integer(c_size_t), value :: buffer_len
      type(c_ptr), value :: value_len
      type(c_ptr), intent(out) :: request
      integer(c_int) :: status
    end function
    function c_test(cache, request) bind(C, name="shmemcache_test") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache, request
      integer(c_int) :: status
    end function
    function c_wait(cache, request) bind(C, name="shmemcache_wait") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache, request
      integer(c_int) :: status
    end function
    function c_get_stats(cache, stats) bind(C, name="shmemcache_get_stats") result(status)
      import :: c_int, c_ptr, shmemcache_stats_t
      type(c_ptr), value :: cache
      type(shmemcache_stats_t), intent(out) :: stats
      integer(c_int) :: status
    end function
    function c_finalize(cache) bind(C, name="shmemcache_finalize") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache
      integer(c_int) :: status
    end function
    function c_store(cache, key, key_len, value, value_len, options, cas_out) bind(C, name="shmemcache_store") &
        result(status)
      import :: c_int, c_ptr, c_char, c_size_t, c_int64_t, store_options_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      type(c_ptr), value :: value
      integer(c_size_t), value :: value_len
      type(store_options_t), intent(in) :: options
      integer(c_int64_t), intent(out) :: cas_out
      integer(c_int) :: status
    end function
    function c_fetch(cache, key, key_len, buffer, buffer_len, value_len, flags, cas) bind(C, name="shmemcache_fetch") &
        result(status)
      import :: c_int, c_ptr, c_char, c_size_t, c_int32_t, c_int64_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      type(c_ptr), value :: buffer
      integer(c_size_t), value :: buffer_len
      integer(c_size_t), intent(out) :: value_len
      integer(c_int32_t), intent(inout) :: flags
      integer(c_int64_t), intent(inout) :: cas
      integer(c_int) :: status
    end function
    function c_touch(cache, key, key_len, ttl_ms) bind(C, name="shmemcache_touch") result(status)
      import :: c_int, c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      integer(c_int64_t), value :: ttl_ms
      integer(c_int) :: status
    end function
    function c_incr(cache, key, key_len, delta, new_value) bind(C, name="shmemcache_incr") result(status)
      import :: c_int, c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: cache
      character(kind=c_char), dimension(*), intent(in) :: key
      integer(c_size_t), value :: key_len
      integer(c_int64_t), value :: delta
      integer(c_int64_t), intent(out) :: new_value
      integer(c_int) :: status
    end function
    function c_flush_all(cache) bind(C, name="shmemcache_flush_all") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: cache
      integer(c_int) :: status
    end function
    function c_server_stats(cache, server, stats) bind(C, name="shmemcache_server_stats") result(status)
      import :: c_int, c_ptr, shmemcache_stats_t
      type(c_ptr), value :: cache
      integer(c_int), value :: server
      type(shmemcache_stats_t), intent(out) :: stats
      integer(c_int) :: status
    end function
    function c_mget(cache, items, count) bind(C, name="shmemcache_mget") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: cache, items
      integer(c_size_t), value :: count
      integer(c_int) :: status
    end function
    function c_mset(cache, items, count) bind(C, name="shmemcache_mset") result(status)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: cache, items
      integer(c_size_t), value :: count
      integer(c_int) :: status
    end function
    subroutine c_destroy(cache) bind(C, name="shmemcache_destroy")
      import :: c_ptr
      type(c_ptr), value :: cache
    end subroutine
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

contains

  ! ---- helpers -----------------------------------------------------------------------------------------------

  ! A Fortran copy of a NUL-terminated C string ('' for NULL).
  function from_c_string(text) result(s)
    type(c_ptr), intent(in) :: text
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: i, n
    if (.not. c_associated(text)) then
      s = ''
      return
    end if
    n = c_strlen(text)
    call c_f_pointer(text, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function from_c_string

  ! Whether x is contiguous. Asked through an assumed-type dummy: is_contiguous on the class(*) dummies of the
  ! public procedures answers .true. for any section with gfortran 12.
  logical function is_contiguous_data(x)
    type(*), dimension(..), intent(in), target :: x
    is_contiguous_data = is_contiguous(x)
  end function is_contiguous_data

  ! The address of x's first byte (x contiguous).
  function address_of(x) result(p)
    type(*), dimension(..), intent(in), target :: x
    type(c_ptr) :: p
    p = c_loc(x)
  end function address_of

  ! The address of x's first byte, or c_null_ptr when x is empty (c_loc needs an element; C takes NULL for none).
  function address_or_null(x) result(p)
    type(*), dimension(..), intent(in), target :: x
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(x) > 0) p = c_loc(x)
  end function address_or_null

  ! Length in characters of a character scalar (0 for any other type).
  pure function character_length(x) result(n)
    class(*), intent(in) :: x
    integer(c_size_t) :: n
    n = 0
    select type (x)
    type is (character(*))
      n = len(x, kind=c_size_t)
    end select
  end function character_length

  ! The number of bytes of x: size(x) * storage_size(x) / 8. Character values are measured with len() instead,
  ! since storage_size of a polymorphic character gives one character's size with gfortran 12 (ranks 0-7).
  function shmemcache_value_bytes(x) result(n)
    class(*), dimension(..), intent(in) :: x
    integer(c_size_t) :: n, chars
    chars = 0
    if (size(x) > 0) then
      select rank (x)
      rank (0)
        chars = character_length(x)
      rank (1)
        chars = character_length(x(1))
      rank (2)
        chars = character_length(x(1, 1))
      rank (3)
        chars = character_length(x(1, 1, 1))
      rank (4)
        chars = character_length(x(1, 1, 1, 1))
      rank (5)
        chars = character_length(x(1, 1, 1, 1, 1))
      rank (6)
        chars = character_length(x(1, 1, 1, 1, 1, 1))
      rank (7)
        chars = character_length(x(1, 1, 1, 1, 1, 1, 1))
      end select
    end if
    if (chars > 0) then
      n = chars * size(x, kind=c_size_t)
    else
      n = size(x, kind=c_size_t) * (storage_size(x, kind=c_size_t) / 8)
    end if
  end function shmemcache_value_bytes

  ! ---- status text -------------------------------------------------------------------------------------------

  ! The library's text for a status ("unknown status" for values it does not know).
  function shmemcache_strerror(status) result(text)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: text
    text = from_c_string(c_strerror(status))
  end function shmemcache_strerror

  ! The detail of this thread's last failure with more to say (e.g. which environment variable to raise);
  ! '' when there is nothing.
  function shmemcache_last_error() result(text)
    character(len=:), allocatable :: text
    text = from_c_string(c_last_error())
  end function shmemcache_last_error

  ! ---- lifetime ----------------------------------------------------------------------------------------------

  ! The defaults with the SHMEMCACHE_* environment applied; CONFIG_ERROR if a variable does not parse.
  function shmemcache_config_defaults(config) result(status)
    type(shmemcache_config_t), intent(out) :: config
    integer(c_int) :: status
    status = c_config_defaults(config)
  end function shmemcache_config_defaults

  ! Collective over every PE. config absent: defaults plus environment. spill_dir (optional) sets the SSD tier
  ! directory for this call (the C field spill_dir of config is ignored when it is present). On success cache
  ! holds a new handle; on failure it holds none and shmemcache_last_error() says what to change.
  function shmemcache_init(cache, config, spill_dir) result(status)
    type(shmemcache_t), intent(out) :: cache
    type(shmemcache_config_t), intent(in), optional :: config
    character(len=*), intent(in), optional :: spill_dir
    integer(c_int) :: status
    type(shmemcache_config_t) :: c
    if (present(config)) then
      c = config
    else
      status = c_config_defaults(c)
      if (status /= SHMEMCACHE_OK) return
    end if
    if (present(spill_dir)) then
      spill_dir_kept = spill_dir // c_null_char
      c%spill_dir = c_loc(spill_dir_kept)
    end if
    status = c_init(c, cache%handle)
  end function shmemcache_init

  logical function shmemcache_is_server(cache)
    type(shmemcache_t), intent(in) :: cache
    shmemcache_is_server = c_is_server(cache%handle) /= 0
  end function shmemcache_is_server

  ! This PE's rank among the clients (0 .. num_clients-1), or -1 on a server.
  integer function shmemcache_client_rank(cache)
    type(shmemcache_t), intent(in) :: cache
    shmemcache_client_rank = c_client_rank(cache%handle)
  end function shmemcache_client_rank

  integer function shmemcache_num_clients(cache)
    type(shmemcache_t), intent(in) :: cache
    shmemcache_num_clients = c_num_clients(cache%handle)
  end function shmemcache_num_clients

  ! Server PEs: serve until every client has finalized. WRONG_ROLE on a client.
  function shmemcache_serve(cache) result(status)
    type(shmemcache_t), intent(in) :: cache
    integer(c_int) :: status
    status = c_serve(cache%handle)
  end function shmemcache_serve

  ! Collective: clients tell the servers they are done, servers return from serve. The handle stays valid for
  ! shmemcache_get_stats; every other call returns SHUT_DOWN until shmemcache_destroy.
  function shmemcache_finalize(cache) result(status)
    type(shmemcache_t), intent(in) :: cache
    integer(c_int) :: status
    status = c_finalize(cache%handle)
  end function shmemcache_finalize

  ! Releases the handle (finalizing first if needed: collective then). cache holds no handle afterwards.
  subroutine shmemcache_destroy(cache)
    type(shmemcache_t), intent(inout) :: cache
    call c_destroy(cache%handle)
    cache%handle = c_null_ptr
  end subroutine shmemcache_destroy

  ! ---- data calls (client PEs) -------------------------------------------------------------------------------

  ! Stores the bytes of value under key, replacing any previous value. OK, or INVALID_ARGUMENT (empty key,
  ! non-contiguous value),
  ! KEY_TOO_LONG, VALUE_TOO_LARGE, NO_SPACE, WRONG_ROLE, SHUT_DOWN; nothing changes on error.
  function shmemcache_set(cache, key, value) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    class(*), dimension(..), intent(in), target :: value
    integer(c_int) :: status
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (.not. is_contiguous_data(value)) return
    status = c_set(cache%handle, key, len(key, kind=c_size_t), address_of(value), shmemcache_value_bytes(value))
  end function shmemcache_set

  ! Copies the value of key into buffer (its first value_len bytes). NOT_FOUND: buffer unchanged, value_len 0.
  ! INVALID_ARGUMENT for a non-contiguous buffer (nothing read).
  ! BUFFER_TOO_SMALL: buffer unchanged, value_len is the size needed.
  function shmemcache_get(cache, key, buffer, value_len) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    class(*), dimension(..), intent(inout), target :: buffer
    integer(c_size_t), intent(out), optional :: value_len
    integer(c_int) :: status
    integer(c_size_t) :: len_out
    len_out = 0
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (is_contiguous_data(buffer)) then
      status = c_get(cache%handle, key, len(key, kind=c_size_t), address_of(buffer), &
                     shmemcache_value_bytes(buffer), len_out)
    end if
    if (present(value_len)) value_len = len_out
  end function shmemcache_get

  ! Removes key: OK if it was present, NOT_FOUND if not.
  function shmemcache_delete(cache, key) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    integer(c_int) :: status
    status = c_delete(cache%handle, key, len(key, kind=c_size_t))
  end function shmemcache_delete

  ! This PE's counters.
  function shmemcache_get_stats(cache, stats) result(status)
    type(shmemcache_t), intent(in) :: cache
    type(shmemcache_stats_t), intent(out) :: stats
    integer(c_int) :: status
    status = c_get_stats(cache%handle, stats)
  end function shmemcache_get_stats

  ! ---- memcached's contract (issue 15; shmemcache.h states the rules) ----------------------------------------
  ! Flags are opaque 32 bits and tokens opaque 64 bits: Fortran's signed integers hold them bit for bit.

  ! Stores value under key as mode says (default SHMEMCACHE_MODE_SET) with flags (default 0), an expiry ttl_ms
  ! from now (default 0 = never) and, when cas /= 0, only if the pair's token equals cas. cas_out receives the new
  ! token. OK; EXISTS, NOT_STORED, NOT_FOUND (cas of an absent key), INVALID_ARGUMENT (mode out of range, a
  ! non-contiguous value), and the errors of shmemcache_set. Nothing changes on error.
  function shmemcache_store(cache, key, value, mode, flags, ttl_ms, cas, cas_out) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    class(*), dimension(..), intent(in), target :: value
    integer(c_int), intent(in), optional :: mode
    integer(c_int32_t), intent(in), optional :: flags
    integer(c_int64_t), intent(in), optional :: ttl_ms, cas
    integer(c_int64_t), intent(out), optional :: cas_out
    integer(c_int) :: status
    type(store_options_t) :: options
    integer(c_int64_t) :: token
    token = 0
    if (present(mode)) options%mode = mode
    if (present(flags)) options%flags = flags
    if (present(ttl_ms)) options%ttl_ms = ttl_ms
    if (present(cas)) options%cas = cas
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (is_contiguous_data(value)) then
      status = c_store(cache%handle, key, len(key, kind=c_size_t), address_of(value), &
                       shmemcache_value_bytes(value), options, token)
    end if
    if (present(cas_out)) cas_out = token
  end function shmemcache_store

  ! shmemcache_get plus the pair's flags and CAS token (set on OK only). Buffer rules as shmemcache_get.
  function shmemcache_fetch(cache, key, buffer, value_len, flags, cas) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    class(*), dimension(..), intent(inout), target :: buffer
    integer(c_size_t), intent(out), optional :: value_len
    integer(c_int32_t), intent(inout), optional :: flags
    integer(c_int64_t), intent(inout), optional :: cas
    integer(c_int) :: status
    integer(c_size_t) :: len_out
    integer(c_int32_t) :: f
    integer(c_int64_t) :: t
    len_out = 0
    f = 0
    t = 0
    if (present(flags)) f = flags
    if (present(cas)) t = cas
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (is_contiguous_data(buffer)) then
      status = c_fetch(cache%handle, key, len(key, kind=c_size_t), address_of(buffer), &
                       shmemcache_value_bytes(buffer), len_out, f, t)
    end if
    if (present(value_len)) value_len = len_out
    if (present(flags)) flags = f
    if (present(cas)) cas = t
  end function shmemcache_fetch

  ! New expiry ttl_ms from now (0 = never) for a present pair; NOT_FOUND if absent.
  function shmemcache_touch(cache, key, ttl_ms) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    integer(c_int64_t), intent(in) :: ttl_ms
    integer(c_int) :: status
    status = c_touch(cache%handle, key, len(key, kind=c_size_t), ttl_ms)
  end function shmemcache_touch

  ! Adds delta to the ASCII decimal counter under key (delta < 0 subtracts, stopping at 0); new_value receives the
  ! result (an unsigned 64-bit number, bit for bit). NOT_FOUND, NOT_NUMERIC.
  function shmemcache_incr(cache, key, delta, new_value) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    integer(c_int64_t), intent(in) :: delta
    integer(c_int64_t), intent(out), optional :: new_value
    integer(c_int) :: status
    integer(c_int64_t) :: n
    n = 0
    status = c_incr(cache%handle, key, len(key, kind=c_size_t), delta, n)
    if (present(new_value)) new_value = n
  end function shmemcache_incr

  ! Removes every pair from every server.
  function shmemcache_flush_all(cache) result(status)
    type(shmemcache_t), intent(in) :: cache
    integer(c_int) :: status
    status = c_flush_all(cache%handle)
  end function shmemcache_flush_all

  ! The published server-side counters of server (0 .. num_servers-1).
  function shmemcache_server_stats(cache, server, stats) result(status)
    type(shmemcache_t), intent(in) :: cache
    integer(c_int), intent(in) :: server
    type(shmemcache_stats_t), intent(out) :: stats
    integer(c_int) :: status
    status = c_server_stats(cache%handle, server, stats)
  end function shmemcache_server_stats

  ! ---- batches (shmemcache.h "Batches": every item gets its own status) ------------------------------------------

  ! Fills b for item i = 1 .. size(keys) (type batch_t). Key i is keys(i)(1:key_lens(i)) when key_lens is
  ! present, else trim(keys(i)). False, nothing to call, when data is not contiguous or does not split into
  ! size(keys) equal slots, or key_lens has another size than keys or a length outside 0 .. len(keys).
  logical function batch_layout(keys, key_lens, data, b)
    character(len=*), intent(in) :: keys(:)
    integer(c_size_t), intent(in), optional :: key_lens(:)
    class(*), dimension(..), intent(in), target :: data
    type(batch_t), intent(out), target :: b
    character(kind=c_char), pointer :: data_bytes(:)
    integer(c_size_t) :: count, total, slot, i, j, at
    batch_layout = .false.
    count = size(keys, kind=c_size_t)
    slot = 0
    if (.not. is_contiguous_data(data)) return
    total = shmemcache_value_bytes(data)
    if (count == 0) then
      if (total /= 0) return
    else
      if (mod(total, count) /= 0) return
      slot = total / count
    end if
    b%slot = slot
    allocate (b%lens(count), b%key_at(count), b%slot_at(count))
    if (present(key_lens)) then
      if (size(key_lens, kind=c_size_t) /= count) return
      if (any(key_lens < 0) .or. any(key_lens > len(keys))) return
      b%lens = key_lens
    else
      b%lens = len_trim(keys, kind=c_size_t)
    end if
    allocate (b%key_bytes(max(1_c_size_t, sum(b%lens))))  ! never empty: c_loc needs an element
    if (slot > 0) call c_f_pointer(address_of(data), data_bytes, [total])
    at = 1
    do i = 1, count
      b%key_at(i) = c_loc(b%key_bytes(min(at, size(b%key_bytes, kind=c_size_t))))
      do j = 1, b%lens(i)
        b%key_bytes(at) = keys(i)(j:j)
        at = at + 1
      end do
      b%slot_at(i) = c_null_ptr
      if (slot > 0) b%slot_at(i) = c_loc(data_bytes((i - 1) * slot + 1))
    end do
    batch_layout = .true.
  end function batch_layout

  ! Stores values' slot i under key i, for i = 1 .. size(keys), as one batch. values: count equal-sized values
  ! back to back (contiguous; e.g. values(:, i) for a 2-D array). statuses(i) receives what shmemcache_set would
  ! return for item i. The call returns OK once every item has its status, or INVALID_ARGUMENT (values not
  ! contiguous or not splitting into size(keys) equal slots, statuses or key_lens of another size than keys),
  ! WRONG_ROLE, SHUT_DOWN: then no item was processed and statuses is unchanged.
  function shmemcache_mset(cache, keys, values, statuses, key_lens) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: keys(:)
    class(*), dimension(..), intent(in), target :: values
    integer(c_int), intent(inout) :: statuses(:)
    integer(c_size_t), intent(in), optional :: key_lens(:)
    integer(c_int) :: status
    type(mset_item_t), allocatable, target :: items(:)
    type(batch_t), target :: b
    integer(c_size_t) :: i
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (size(statuses) /= size(keys)) return
    if (.not. batch_layout(keys, key_lens, values, b)) return
    allocate (items(size(keys)))
    do i = 1, size(items, kind=c_size_t)
      items(i) = mset_item_t(b%key_at(i), b%lens(i), b%slot_at(i), b%slot, SHMEMCACHE_OK)
    end do
    status = c_mset(cache%handle, address_or_null(items), size(items, kind=c_size_t))
    if (status == SHMEMCACHE_OK) statuses = items%status
  end function shmemcache_mset

  ! Reads the value of key i into buffers' slot i, for i = 1 .. size(keys), as one batch. buffers: count
  ! equal-sized slots back to back (contiguous; e.g. buffers(:, i)). statuses(i) and value_lens(i) receive what
  ! shmemcache_get would return for item i (OK: the value is in slot i, its first value_lens(i) bytes; NOT_FOUND:
  ! length 0; BUFFER_TOO_SMALL: the size needed, the slot unchanged). The call's own status as shmemcache_mset;
  ! on a call error no slot, status or length is changed.
  function shmemcache_mget(cache, keys, buffers, statuses, value_lens, key_lens) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: keys(:)
    class(*), dimension(..), intent(inout), target :: buffers
    integer(c_int), intent(inout) :: statuses(:)
    integer(c_size_t), intent(inout), optional :: value_lens(:)
    integer(c_size_t), intent(in), optional :: key_lens(:)
    integer(c_int) :: status
    type(mget_item_t), allocatable, target :: items(:)
    type(batch_t), target :: b
    integer(c_size_t) :: i
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (size(statuses) /= size(keys)) return
    if (present(value_lens)) then
      if (size(value_lens) /= size(keys)) return
    end if
    if (.not. batch_layout(keys, key_lens, buffers, b)) return
    allocate (items(size(keys)))
    do i = 1, size(items, kind=c_size_t)
      items(i) = mget_item_t(b%key_at(i), b%lens(i), b%slot_at(i), b%slot, 0_c_size_t, SHMEMCACHE_OK)
    end do
    status = c_mget(cache%handle, address_or_null(items), size(items, kind=c_size_t))
    if (status /= SHMEMCACHE_OK) return
    statuses = items%status
    if (present(value_lens)) value_lens = items%value_len
  end function shmemcache_mget

  ! ---- non-blocking ------------------------------------------------------------------------------------------

  ! Issues a set whose key and value are copied or sent before it returns (reuse them at once). Errors found at
  ! issue are returned here and request holds nothing; otherwise complete it with shmemcache_wait.
  function shmemcache_bset(cache, key, value, request) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    class(*), dimension(..), intent(in), target :: value
    type(shmemcache_request_t), intent(out) :: request
    integer(c_int) :: status
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (.not. is_contiguous_data(value)) return
    status = c_bset(cache%handle, key, len(key, kind=c_size_t), address_of(value), &
                    shmemcache_value_bytes(value), request%handle)
  end function shmemcache_bset

  ! Issues a get into buffer; the key may be reused at once. buffer is written at completion: it must stay allocated and not be touched until shmemcache_wait returns
  ! (declare it asynchronous where the compiler could otherwise move accesses across the wait).
  function shmemcache_bget(cache, key, buffer, request) result(status)
    type(shmemcache_t), intent(in) :: cache
    character(len=*), intent(in) :: key
    class(*), dimension(..), intent(inout), target, asynchronous :: buffer
    type(shmemcache_request_t), intent(out) :: request
    integer(c_int) :: status
    status = SHMEMCACHE_INVALID_ARGUMENT
    if (.not. is_contiguous_data(buffer)) return
    allocate (request%value_len)
    request%value_len = 0
    status = c_bget(cache%handle, key, len(key, kind=c_size_t), address_of(buffer), &
                    shmemcache_value_bytes(buffer), c_loc(request%value_len), request%handle)
    if (status /= SHMEMCACHE_OK) deallocate (request%value_len)
  end function shmemcache_bget

  ! Never blocks: IN_PROGRESS, or the operation's final status (the request is not released: wait for it).
  function shmemcache_test(cache, request) result(status)
    type(shmemcache_t), intent(in) :: cache
    type(shmemcache_request_t), intent(in) :: request
    integer(c_int) :: status
    status = c_test(cache%handle, request%handle)
  end function shmemcache_test

  ! Blocks until the request completes, returns its final status and releases it. For a get, value_len (optional)
  ! receives what shmemcache_get would have written. A request that holds nothing gives INVALID_ARGUMENT.
  function shmemcache_wait(cache, request, value_len) result(status)
    type(shmemcache_t), intent(in) :: cache
    type(shmemcache_request_t), intent(inout) :: request
    integer(c_size_t), intent(out), optional :: value_len
    integer(c_int) :: status
    if (.not. c_associated(request%handle)) then
      status = SHMEMCACHE_INVALID_ARGUMENT
      if (present(value_len)) value_len = 0
      return
    end if
    status = c_wait(cache%handle, request%handle)
    request%handle = c_null_ptr
    if (present(value_len)) value_len = 0
    if (associated(request%value_len)) then
      if (present(value_len)) value_len = request%value_len
      deallocate (request%value_len)
    end if
  end function shmemcache_wait

end module shmemcache
