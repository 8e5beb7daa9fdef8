! peer.f90 - the Fortran rank of the mixed-language MPMD jobs (MixedJobTests): world rank 0,
! application 0, beside Motor ranks running the scenario mixed-world
! (tests/Scenarios/Interop/MixedJobs.cs), which makes the same calls in the same order.
! Prints PASS or FAIL; exits 1 when a check failed.
program peer
  use mpi
  implicit none
  integer, parameter :: n_doubles = 1000
  integer :: ierr, me, n, appnum, m, i, own, osize, orank, rsum, seven, most, nxt
  integer(kind=MPI_ADDRESS_KIND) :: attr
  logical :: flag, exact
  integer :: failures = 0
  integer, allocatable :: apps(:), gath(:)
  double precision :: d(n_doubles), s, one, total
  integer :: back(n_doubles), pair(2), ten(10), dummy(1)
  integer(kind=8) :: b(16)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, attr, flag, ierr)
  appnum = -1
  if (flag) appnum = int(attr)
  call check(me == 0 .and. appnum == 0 .and. n >= 2, 'world rank 0, application 0, Motor ranks after it')

  allocate(apps(n), gath(n))
  call MPI_Allgather(appnum, 1, MPI_INTEGER, apps, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all_positive(apps(2:n)), 'every other rank is of another application')

  ! Arrays both ways.
  do m = 1, n - 1
    do i = 1, n_doubles
      d(i) = m + (i - 1) * 0.25d0
    end do
    call MPI_Send(d, n_doubles, MPI_DOUBLE_PRECISION, m, 1, MPI_COMM_WORLD, ierr)
  end do
  do m = 1, n - 1
    call MPI_Recv(s, 1, MPI_DOUBLE_PRECISION, m, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(s == 1000.0d0 * m + 124875.0d0, 'the sum a Motor rank sent back')
    call MPI_Recv(back, n_doubles, MPI_INTEGER, m, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    exact = .true.
    do i = 1, n_doubles
      exact = exact .and. back(i) == m * 1000 + (i - 1)
    end do
    call check(exact, 'every int a Motor rank sent, exactly')
  end do

  ! Collectives.
  do i = 1, 16
    b(i) = ishft(3_8, i - 1) + (i - 1)
  end do
  call MPI_Bcast(b, 16, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  one = me + 1.0d0
  call MPI_Allreduce(one, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(total == n * (n + 1) / 2.0d0, 'Allreduce (sum of doubles)')
  seven = me * 7
  call MPI_Allreduce(seven, most, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(most == (n - 1) * 7, 'Allreduce (max of ints)')
  call MPI_Gather(me * 10 + 1, 1, MPI_INTEGER, gath, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  exact = .true.
  do i = 1, n
    exact = exact .and. gath(i) == (i - 1) * 10 + 1
  end do
  call check(exact, 'Gather at the Fortran rank')
  pair = (/ me, me * me /)
  call MPI_Gather(pair, 2, MPI_INTEGER, dummy, 0, MPI_INTEGER, n - 1, MPI_COMM_WORLD, ierr)

  ! This program's own communicator.
  call MPI_Comm_split(MPI_COMM_WORLD, appnum, me, own, ierr)
  call MPI_Comm_size(own, osize, ierr)
  call MPI_Comm_rank(own, orank, ierr)
  call MPI_Allreduce(orank, rsum, 1, MPI_INTEGER, MPI_SUM, own, ierr)
  call check(osize == 1 .and. rsum == 0, 'the split by application number holds the Fortran rank alone')
  call MPI_Comm_free(own, ierr)

  ! Too much for the Motor ranks' receive of 5 ints; then a message that fits.
  ten = (/ (i, i = 0, 9) /)
  do m = 1, n - 1
    nxt = 4242 + m
    call MPI_Send(ten, 10, MPI_INTEGER, m, 5, MPI_COMM_WORLD, ierr)
    call MPI_Send(nxt, 1, MPI_INTEGER, m, 6, MPI_COMM_WORLD, ierr)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (failures == 0) then
    write (*, '(A,I0,A,I0,A)') 'PASS mixed-peer fortran rank ', me, ' (', n, ' ranks)'
  else
    write (*, '(A,I0,A,I0,A)') 'FAIL mixed-peer fortran rank ', me, ' (', n, ' ranks)'
  end if
  flush (6)
  call MPI_Finalize(ierr)
  if (failures /= 0) call exit(1)

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      write (*, '(A,A)') 'FAIL mixed-peer fortran: ', what
      failures = failures + 1
    end if
  end subroutine check

  logical function all_positive(v)
    integer, intent(in) :: v(:)
    all_positive = all(v > 0)
  end function all_positive

end program peer
