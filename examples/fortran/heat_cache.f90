! heat_cache.f90 — a Fortran solver that caches what it computes in shmemcache.
!
! The solver: the 1-D heat equation u_t = alpha * u_xx on [0, 1], u(0) = u(1) = 0, u(x, 0) = sin(pi x), explicit
! finite differences on n interior points up to t = t_end. Its exact solution is exp(-pi**2 alpha t) sin(pi x).
!
! Every client needs the solution for every parameter set (n, alpha). It asks the cache first, under a key built
! from the parameters, and only computes (and stores) on a miss; the clients start at different parameter sets,
! so each computes some and fetches the others. Then each client fetches every solution once more (all must be
! there). Every solution, computed or fetched, is checked against the exact solution (discretisation error) and
! every fetched one bit for bit against a recomputation (the solver is deterministic).
!
!   scripts/oshrun.sh -np 3 build/fortran/shmemcache_heat_cache      # PE 0 serves, PEs 1-2 solve
!
! Exit status 0 when every check passed on every client.
program heat_cache
  use, intrinsic :: iso_c_binding
  use shmemcache
  implicit none

  integer, parameter :: dp = c_double
  integer, parameter :: sizes(3) = [64, 128, 256]
  real(dp), parameter :: alphas(2) = [0.5_dp, 1.0_dp]
  real(dp), parameter :: t_end = 0.02_dp
  real(dp), parameter :: pi = acos(-1.0_dp)

  type(shmemcache_t) :: cache
  integer(c_int) :: status
  integer :: failures = 0, computed = 0, fetched = 0, rank, clients, pass, i, first, p
  integer :: n_sets

  n_sets = size(sizes) * size(alphas)
  status = shmemcache_init(cache)
  if (status /= SHMEMCACHE_OK) then
    print '(a, a, a)', 'heat_cache: shmemcache_init: ', shmemcache_strerror(status), shmemcache_last_error()
    error stop 1
  end if

  if (shmemcache_is_server(cache)) then
    status = shmemcache_serve(cache)
    if (status /= SHMEMCACHE_OK) failures = failures + 1
  else
    rank = shmemcache_client_rank(cache)
    clients = shmemcache_num_clients(cache)
    first = rank * n_sets / clients
    do pass = 1, 2
      do i = 0, n_sets - 1
        p = modulo(first + i, n_sets)
        call solution(sizes(p / size(alphas) + 1), alphas(modulo(p, size(alphas)) + 1), must_hit=(pass == 2))
      end do
    end do
    print '(a, i0, a, i0, a, i0, a, i0, a)', 'heat_cache: client ', rank, ': computed ', computed, ', fetched ', &
      fetched, ', ', failures, ' failed checks'
  end if

  status = shmemcache_finalize(cache)
  if (status /= SHMEMCACHE_OK) failures = failures + 1
  call shmemcache_destroy(cache)
  if (failures > 0) error stop 1

contains

  ! The cache key of a parameter set: every parameter, printed exactly.
  function key_of(n, alpha) result(key)
    integer, intent(in) :: n
    real(dp), intent(in) :: alpha
    character(len=:), allocatable :: key
    character(len=128) :: buffer
    write (buffer, '(a, i0, a, es23.16, a, es23.16)') 'heat1d:n=', n, ':alpha=', alpha, ':t_end=', t_end
    key = trim(buffer)
  end function key_of

  ! The solver: explicit Euler in time, second-order centred differences in space, dt at 0.4 of the stability limit.
  subroutine solve(n, alpha, u)
    integer, intent(in) :: n
    real(dp), intent(in) :: alpha
    real(dp), intent(out) :: u(n)
    real(dp) :: dx, dt, r, padded(0:n + 1)
    integer :: j, steps, s
    dx = 1.0_dp / (n + 1)
    steps = ceiling(t_end / (0.4_dp * dx**2 / alpha))
    dt = t_end / steps
    r = alpha * dt / dx**2
    padded = 0
    padded(1:n) = [(sin(pi * j * dx), j = 1, n)]
    do s = 1, steps
      padded(1:n) = padded(1:n) + r * (padded(0:n - 1) - 2 * padded(1:n) + padded(2:n + 1))
    end do
    u = padded(1:n)
  end subroutine solve

  ! Fetches the solution for (n, alpha) from the cache, or computes and stores it; checks it either way.
  subroutine solution(n, alpha, must_hit)
    integer, intent(in) :: n
    real(dp), intent(in) :: alpha
    logical, intent(in) :: must_hit
    real(dp), allocatable :: u(:), reference(:)
    integer(c_size_t) :: nbytes
    character(len=:), allocatable :: key
    integer :: j
    real(dp) :: exact, error, dx
    allocate (u(n), reference(n))
    key = key_of(n, alpha)
    status = shmemcache_get(cache, key, u, nbytes)
    if (status == SHMEMCACHE_OK) then
      fetched = fetched + 1
      call check(nbytes == n * c_sizeof(u(1)), key // ': fetched a value of the wrong size')
      call solve(n, alpha, reference)
      call check(all(u == reference), key // ': fetched values differ from a recomputation')
    else if (status == SHMEMCACHE_NOT_FOUND .and. .not. must_hit) then
      computed = computed + 1
      call solve(n, alpha, u)
      status = shmemcache_set(cache, key, u)
      call check(status == SHMEMCACHE_OK, key // ': set: ' // shmemcache_strerror(status))
    else
      call check(.false., key // ': get: ' // shmemcache_strerror(status))
      return
    end if
    dx = 1.0_dp / (n + 1)
    error = 0
    do j = 1, n
      exact = exp(-pi**2 * alpha * t_end) * sin(pi * j * dx)
      error = max(error, abs(u(j) - exact))
    end do
    call check(error < 2 * dx**2, key // ': too far from the exact solution')
  end subroutine solution

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      failures = failures + 1
      print '(a, i0, a, a)', 'heat_cache: client ', rank, ': FAILED: ', what
    end if
  end subroutine check

end program heat_cache
