/* file.c - parallel I/O (MPI-4.0 chapter 14): files opened collectively over a
 * communicator, views made of an etype and a strided filetype, data accesses
 * by explicit offset or by the individual or shared file pointer, blocking or
 * nonblocking (tracked in the request table like any request). */
#include "comms.h"
#include "info.h"
#include "requests.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#define MAX_FILES 1024

typedef struct file_entry {
    MPI_File mpi;
    MPI_Datatype etype; /* of the current view: MPI_BYTE, or esize bytes (owned) */
    int esize;
} file_entry_t;

static file_entry_t g_files[MAX_FILES];
static int g_file_used[MAX_FILES];
static mp_spin_t g_file_lock = MP_SPIN_INIT;

static int file_get(mp_file_t f, file_entry_t **out)
{
    if (!mp_ready())
        return mp_fail_state();
    if (f < 0 || f >= MAX_FILES || !g_file_used[f])
        return mp_fail(MP_EHANDLE, "file handle %d is not valid (closed or never opened)", f);
    *out = &g_files[f];
    return 0;
}

static void etype_release(file_entry_t *e)
{
    if (e->etype != MPI_BYTE && e->etype != MPI_DATATYPE_NULL)
        pal_mpi.Type_free(&e->etype);
    e->etype = MPI_BYTE;
    e->esize = 1;
}

/* Motor's mode bits as MPI's (14.2.1); MPI itself judges the combination. */
static int mpi_amode(int amode)
{
    static const struct { int mp, mpi; } k_modes[] = {
        { MP_MODE_RDONLY, MPI_MODE_RDONLY }, { MP_MODE_WRONLY, MPI_MODE_WRONLY },
        { MP_MODE_RDWR, MPI_MODE_RDWR }, { MP_MODE_CREATE, MPI_MODE_CREATE },
        { MP_MODE_EXCL, MPI_MODE_EXCL }, { MP_MODE_DELETE_ON_CLOSE, MPI_MODE_DELETE_ON_CLOSE },
        { MP_MODE_UNIQUE_OPEN, MPI_MODE_UNIQUE_OPEN }, { MP_MODE_SEQUENTIAL, MPI_MODE_SEQUENTIAL },
        { MP_MODE_APPEND, MPI_MODE_APPEND },
    };
    int m = 0;
    for (size_t i = 0; i < sizeof k_modes / sizeof *k_modes; i++)
        if (amode & k_modes[i].mp)
            m |= k_modes[i].mpi;
    return m;
}

/* The OS path in a file name given to MPI: without ROMIO's file-system prefix ("ufs:", "nfs:",
 * "lustre:"), which names how to reach the file, not where it is. */
static const char *os_path(const char *path)
{
    const char *colon = strchr(path, ':');
    if (!colon || colon - path < 2)
        return path;
    for (const char *p = path; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return path;
    return colon + 1;
}

/* MPI_File_open's failure with the path and, where the OS can tell, why, first: MPI's own text
 * names neither (MPICH: "File does not exist, error stack: ... Invalid file name", even for a
 * file to be created in a directory that does not exist).  MPI's words and class follow. */
static MP_COLD int open_failed(int rc, const char *path, int amode)
{
    static const char k_call[] = "MPI_File_open: ";
    char mpi_text[2048], why[512];
    int cls = 0;
    mp_last_error(&cls, mpi_text, (int)sizeof mpi_text);
    pal_path_problem(os_path(path), (amode & MP_MODE_CREATE) != 0, (amode & (MP_MODE_WRONLY | MP_MODE_RDWR)) != 0,
                     why, (int)sizeof why);
    return mp_fail_class(rc, cls, "%s\"%s\"%s%s; %s", k_call, path, why[0] ? ": " : "", why,
                         strncmp(mpi_text, k_call, sizeof k_call - 1) == 0 ? mpi_text + sizeof k_call - 1 : mpi_text);
}

int mp_file_open(mp_comm_t comm, const char *path, int amode, mp_info_t info, mp_file_t *file)
{
    const comm_entry_t *ce;
    MPI_Info mi = MPI_INFO_NULL;
    MPI_File fh = MPI_FILE_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)) || (rc = mp_info_lookup(info, &mi)))
        return rc;
    if (!path || !*path)
        return mp_fail(MP_EINVAL, "file path is empty");
    if (amode & ~(MP_MODE_APPEND * 2 - 1))
        return mp_fail(MP_EINVAL, "access mode 0x%x has bits that are not MP_MODE_*", (unsigned)amode);
    mp_blocking_enter();
    /* Errors of open are reported to MPI_FILE_NULL's handler (14.7). */
    rc = MP_MPI_CHECK(pal_mpi.File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), "MPI_File_set_errhandler");
    if (!rc && (rc = MP_MPI_CHECK(pal_mpi.File_open(ce->mpi, path, mpi_amode(amode), mi, &fh), "MPI_File_open")))
        rc = open_failed(rc, path, amode);
    else if (!rc && (rc = MP_MPI_CHECK(pal_mpi.File_set_errhandler(fh, MPI_ERRORS_RETURN), "MPI_File_set_errhandler")))
        pal_mpi.File_close(&fh);
    mp_blocking_leave();
    if (rc)
        return rc;
    mp_spin_lock(&g_file_lock);
    for (int i = 0; i < MAX_FILES; i++) {
        if (!g_file_used[i]) {
            g_file_used[i] = 1;
            g_files[i] = (file_entry_t){ fh, MPI_BYTE, 1 };
            mp_spin_unlock(&g_file_lock);
            *file = i;
            return 0;
        }
    }
    mp_spin_unlock(&g_file_lock);
    mp_blocking_enter();
    pal_mpi.File_close(&fh);
    mp_blocking_leave();
    return mp_fail(MP_ENOMEM, "too many open files at once (at most %d)", MAX_FILES);
}

int mp_file_close(mp_file_t file)
{
    file_entry_t *e = NULL;
    MPI_File fh;
    int rc;
    if ((rc = file_get(file, &e)))
        return rc;
    fh = e->mpi;
    mp_blocking_enter();
    etype_release(e);
    mp_spin_lock(&g_file_lock);
    g_file_used[file] = 0;
    mp_spin_unlock(&g_file_lock);
    rc = MP_MPI_CHECK(pal_mpi.File_close(&fh), "MPI_File_close");
    mp_blocking_leave();
    return rc;
}

int mp_file_delete(const char *path, mp_info_t info)
{
    MPI_Info mi = MPI_INFO_NULL;
    int rc;
    if ((rc = mp_info_lookup(info, &mi)))
        return rc;
    if (!path || !*path)
        return mp_fail(MP_EINVAL, "file path is empty");
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), "MPI_File_set_errhandler");
    if (!rc)
        rc = MP_MPI_CHECK(pal_mpi.File_delete(path, mi), "MPI_File_delete");
    mp_blocking_leave();
    return rc;
}

/* The shape of a view's filetype: `block` etypes every `stride` (block 0: the etype itself,
 * contiguous), or, when ndims > 0, the subarray subsizes[] at starts[] of sizes[] (C order). */
typedef struct view_shape {
    int64_t block, stride;
    int ndims;
    const int32_t *sizes, *subsizes, *starts;
} view_shape_t;

/* The filetype of a view: the etype; or `block` etypes every `stride` (a contiguous block
 * resized to the stride's extent, so consecutive copies tile the file and other ranks' blocks
 * fall in the gaps); or a subarray, whose extent is the whole array. */
static int make_filetype(MPI_Datatype etype, int esize, const view_shape_t *v, MPI_Datatype *out)
{
    MPI_Datatype contig = MPI_DATATYPE_NULL;
    int rc;
    if (v->ndims > 0) {
        rc = MP_MPI_CHECK(pal_mpi.Type_create_subarray(v->ndims, (const int *)v->sizes, (const int *)v->subsizes,
                                                       (const int *)v->starts, MPI_ORDER_C, etype, out),
                          "MPI_Type_create_subarray");
    } else if (v->block == 0) {
        *out = etype;
        return 0;
    } else {
        if (v->block < 0 || v->block > INT_MAX || v->stride < v->block || v->stride > INT64_MAX / esize)
            return mp_fail(MP_EINVAL, "filetype of %lld etypes every %lld: needs 0 < block <= stride",
                           (long long)v->block, (long long)v->stride);
        if ((rc = MP_MPI_CHECK(pal_mpi.Type_contiguous((int)v->block, etype, &contig), "MPI_Type_contiguous")))
            return rc;
        rc = MP_MPI_CHECK(pal_mpi.Type_create_resized(contig, 0, (MPI_Aint)(v->stride * esize), out),
                          "MPI_Type_create_resized");
        pal_mpi.Type_free(&contig);
    }
    if (!rc && (rc = MP_MPI_CHECK(pal_mpi.Type_commit(out), "MPI_Type_commit")))
        pal_mpi.Type_free(out);
    return rc;
}

/* The view's types made and set; on success *etype replaces the file's. */
static int set_view(const file_entry_t *e, int64_t disp, int esize, const view_shape_t *v, MPI_Info mi,
                    MPI_Datatype *etype)
{
    MPI_Datatype filetype = MPI_DATATYPE_NULL;
    int rc;
    *etype = MPI_BYTE;
    if (esize > 1) {
        if ((rc = MP_MPI_CHECK(pal_mpi.Type_contiguous(esize, MPI_BYTE, etype), "MPI_Type_contiguous")))
            return rc;
        if ((rc = MP_MPI_CHECK(pal_mpi.Type_commit(etype), "MPI_Type_commit")))
            goto fail;
    }
    if ((rc = make_filetype(*etype, esize, v, &filetype)))
        goto fail;
    rc = MP_MPI_CHECK(pal_mpi.File_set_view(e->mpi, (MPI_Offset)disp, *etype, filetype, "native", mi),
                      "MPI_File_set_view");
    if (filetype != *etype)
        pal_mpi.Type_free(&filetype); /* MPI keeps its own reference (MPI-4.0 5.1.7) */
    if (!rc)
        return 0;
fail:
    if (*etype != MPI_BYTE)
        pal_mpi.Type_free(etype);
    return rc;
}

/* A view set on a file: checked arguments, the new etype kept. */
static int file_view(mp_file_t file, int64_t disp, int esize, const view_shape_t *v, mp_info_t info)
{
    file_entry_t *e = NULL;
    MPI_Info mi = MPI_INFO_NULL;
    MPI_Datatype etype;
    int rc;
    if ((rc = file_get(file, &e)) || (rc = mp_info_lookup(info, &mi)))
        return rc;
    if (disp < 0)
        return mp_fail(MP_EINVAL, "view displacement %lld is negative", (long long)disp);
    if (esize <= 0)
        return mp_fail(MP_EINVAL, "etype size %d is not positive", esize);
    mp_blocking_enter();
    if (!(rc = set_view(e, disp, esize, v, mi, &etype))) {
        etype_release(e);
        e->etype = etype;
        e->esize = esize;
    }
    mp_blocking_leave();
    return rc;
}

int mp_file_set_view(mp_file_t file, int64_t disp, int esize, int64_t block, int64_t stride, mp_info_t info)
{
    const view_shape_t v = { .block = block, .stride = stride };
    return file_view(file, disp, esize, &v, info);
}

/* The most dimensions a subarray view takes here (the MPI libraries take more; a bound keeps
 * the checks simple). */
#define MP_SUBARRAY_MAX_DIMS 32

int mp_file_set_view_subarray(mp_file_t file, int64_t disp, int esize, int ndims, const int32_t *sizes,
                              const int32_t *subsizes, const int32_t *starts, mp_info_t info)
{
    const view_shape_t v = { .ndims = ndims, .sizes = sizes, .subsizes = subsizes, .starts = starts };
    int64_t bytes = esize > 0 ? esize : 1;
    if (ndims < 1 || ndims > MP_SUBARRAY_MAX_DIMS)
        return mp_fail(MP_EINVAL, "a subarray view of %d dimensions: needs 1 to %d", ndims, MP_SUBARRAY_MAX_DIMS);
    if (!sizes || !subsizes || !starts)
        return mp_fail(MP_EINVAL, "subarray %s is NULL", !sizes ? "sizes" : !subsizes ? "subsizes" : "starts");
    for (int d = 0; d < ndims; d++) {
        if (sizes[d] < 1 || subsizes[d] < 1 || starts[d] < 0 || starts[d] > sizes[d] - subsizes[d])
            return mp_fail(MP_EINVAL, "subarray dimension %d: %d elements from %d of %d do not fit "
                           "(sizes and subsizes positive, 0 <= start, start + subsize <= size)",
                           d, subsizes[d], starts[d], sizes[d]);
        if (bytes > INT64_MAX / sizes[d])
            return mp_fail(MP_EINVAL, "a subarray of more than %lld bytes", (long long)INT64_MAX);
        bytes *= sizes[d];
    }
    return file_view(file, disp, esize, &v, info);
}

/* The count of etypes in bytes, checked. */
static int io_count(const file_entry_t *e, const void *buf, int64_t bytes, int *count)
{
    if (bytes < 0)
        return mp_fail(MP_ECOUNT, "byte count %lld is negative", (long long)bytes);
    if (!buf && bytes > 0)
        return mp_fail(MP_EINVAL, "buffer is NULL but byte count is %lld", (long long)bytes);
    if (bytes % e->esize)
        return mp_fail(MP_ECOUNT, "%lld bytes are not a whole number of the view's %d-byte etypes",
                       (long long)bytes, e->esize);
    if (bytes / e->esize > INT_MAX)
        return mp_fail(MP_ECOUNT, "%lld etypes in one access exceed MPI's int count", (long long)(bytes / e->esize));
    *count = (int)(bytes / e->esize);
    return 0;
}

typedef int (*io_at_fn)(MPI_File, MPI_Offset, void *, int, MPI_Datatype, MPI_Status *);
typedef int (*io_ptr_fn)(MPI_File, void *, int, MPI_Datatype, MPI_Status *);

static const char *const k_io_names[MP_IO_COUNT] = {
    "MPI_File_read_at", "MPI_File_write_at", "MPI_File_read_at_all", "MPI_File_write_at_all",
    "MPI_File_read", "MPI_File_write", "MPI_File_read_all", "MPI_File_write_all",
    "MPI_File_read_shared", "MPI_File_write_shared", "MPI_File_read_ordered", "MPI_File_write_ordered",
};

/* The write functions take const buffers; called through the read signature. */
static int run_io(const file_entry_t *e, int op, int64_t offset, void *buf, int count, MPI_Status *st)
{
    io_at_fn at = NULL;
    io_ptr_fn ptr = NULL;
    switch (op) {
    case MP_IO_READ_AT: at = pal_mpi.File_read_at; break;
    case MP_IO_WRITE_AT: at = (io_at_fn)pal_mpi.File_write_at; break;
    case MP_IO_READ_AT_ALL: at = pal_mpi.File_read_at_all; break;
    case MP_IO_WRITE_AT_ALL: at = (io_at_fn)pal_mpi.File_write_at_all; break;
    case MP_IO_READ: ptr = pal_mpi.File_read; break;
    case MP_IO_WRITE: ptr = (io_ptr_fn)pal_mpi.File_write; break;
    case MP_IO_READ_ALL: ptr = pal_mpi.File_read_all; break;
    case MP_IO_WRITE_ALL: ptr = (io_ptr_fn)pal_mpi.File_write_all; break;
    case MP_IO_READ_SHARED: ptr = pal_mpi.File_read_shared; break;
    case MP_IO_WRITE_SHARED: ptr = (io_ptr_fn)pal_mpi.File_write_shared; break;
    case MP_IO_READ_ORDERED: ptr = pal_mpi.File_read_ordered; break;
    case MP_IO_WRITE_ORDERED: ptr = (io_ptr_fn)pal_mpi.File_write_ordered; break;
    }
    return at ? at(e->mpi, (MPI_Offset)offset, buf, count, e->etype, st)
              : ptr(e->mpi, buf, count, e->etype, st);
}

static int check_op(int op, int64_t offset)
{
    if (op < 0 || op >= MP_IO_COUNT)
        return mp_fail(MP_EINVAL, "I/O operation %d is not an MP_IO_*", op);
    if (offset < 0 && op <= MP_IO_WRITE_AT_ALL)
        return mp_fail(MP_EINVAL, "file offset %lld is negative", (long long)offset);
    return 0;
}

/* Open MPI 4.1's MPI_File_write_all returns MPI_SUCCESS with every byte counted from a write
 * that failed (ENOSPC), where its MPI_File_write_at_all counts what was written: the same
 * access made as MPI_File_write_at_all at the individual pointer, which then moves past what
 * was written (MPI-4.0 14.4.3: the pointer advances by the etypes accessed). */
static int write_all_at_pointer(const file_entry_t *e, void *buf, int count, MPI_Status *st)
{
    MPI_Offset at = 0;
    int rc = MP_MPI_CHECK(pal_mpi.File_get_position(e->mpi, &at), "MPI_File_get_position");
    if (!rc)
        rc = MP_MPI_CHECK(pal_mpi.File_write_at_all(e->mpi, at, buf, count, e->etype, st), "MPI_File_write_all");
    if (!rc)
        rc = MP_MPI_CHECK(pal_mpi.File_seek(e->mpi, at + (MPI_Offset)(pal_status_bytes(st) / e->esize), MPI_SEEK_SET),
                          "MPI_File_seek");
    return rc;
}

/* A blocking access of op (MPI's status in *st); a write that MPI reports done is checked for
 * every byte: Open MPI 4.1 returns MPI_SUCCESS with a count of 0 from a write that failed
 * (ENOSPC: the device full), and the data would be lost without a word.  Reads may move fewer
 * bytes than asked: the end of the file. */
static int access_file(const file_entry_t *e, int op, int64_t offset, void *buf, int count, int64_t bytes,
                       MPI_Status *st)
{
    int64_t moved;
    int rc;
    memset(st, 0, sizeof *st);
    mp_blocking_enter();
    if (PAL_MPI_BUILD_ABI == PAL_ABI_OPENMPI && op == MP_IO_WRITE_ALL)
        rc = write_all_at_pointer(e, buf, count, st);
    else
        rc = MP_MPI_CHECK(run_io(e, op, offset, buf, count, st), k_io_names[op]);
    mp_blocking_leave();
    if (rc || !(op & 1) || (moved = pal_status_bytes(st)) == bytes) /* MP_IO_WRITE* are the odd ops */
        return rc;
    return mp_mpi_fail_unreported(MPI_ERR_IO, "%s: MPI_ERR_IO: wrote %lld of %lld bytes but returned MPI_SUCCESS: the rest "
                                  "is lost (the MPI library did not report the failure, as Open MPI 4.1 does when "
                                  "the device is full)", k_io_names[op], (long long)moved, (long long)bytes);
}

/* A file access's status holds only the count (MPI-4.0 14.4.1): no peer, no tag. */
static void file_status(const MPI_Status *st, mp_status_t *out)
{
    status_empty(out);
    out->bytes = pal_status_bytes(st);
}

int mp_file_io(mp_file_t file, int op, int64_t offset, void *buf, int64_t bytes, mp_status_t *status)
{
    file_entry_t *e = NULL;
    MPI_Status st;
    int rc, count = 0;
    if ((rc = file_get(file, &e)) || (rc = check_op(op, offset)) || (rc = io_count(e, buf, bytes, &count)))
        return rc;
    rc = access_file(e, op, offset, buf, count, bytes, &st);
    if (!rc && status)
        file_status(&st, status);
    return rc;
}

/* ---- nonblocking accesses made in the background ----
 * MPI's own nonblocking file accesses fail badly where the file system fails them: MPICH 4.0
 * never completes one (MPI_Test says pending forever: a full device for writes, EIO for reads)
 * and Open MPI 4.1's MPI_Test or MPI_Wait on one crashes the process in its error handler
 * (docs/architecture.md, "MPI libraries' defects").  So at MPI_THREAD_MULTIPLE the access is
 * made by a thread of its own with the blocking call, whose failures both report, and its
 * request is an MPI generalized request (MPI-4.0 13.2) that the thread completes: every request
 * path (test, wait, sets, the GC's mark) treats it as any MPI request.  Below Multiple no other
 * thread may call MPI, and the access is made inside the post. */
typedef struct file_job {
    const file_entry_t *e;
    int op, count, rc, mpi_class;
    int64_t offset, bytes, moved;
    void *buf;
    MPI_Request greq;
} file_job_t;

static int job_query(void *extra, MPI_Status *st)
{
    const file_job_t *j = extra;
    pal_mpi.Status_set_elements_x(st, MPI_BYTE, (MPI_Count)j->moved);
    pal_mpi.Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    return j->rc ? (j->mpi_class ? j->mpi_class : MPI_ERR_OTHER) : MPI_SUCCESS;
}

static int job_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int job_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete; /* an access under way runs to its end; MPI_Test_cancelled then says false */
    return MPI_SUCCESS;
}

static int job_run(void *arg)
{
    file_job_t *j = arg;
    MPI_Status st;
    j->rc = access_file(j->e, j->op, j->offset, j->buf, j->count, j->bytes, &st);
    if (j->rc)
        mp_last_error(&j->mpi_class, NULL, 0);
    else
        j->moved = pal_status_bytes(&st);
    mp_blocking_enter();
    pal_mpi.Grequest_complete(j->greq);
    mp_blocking_leave();
    return 0;
}

/* Starts the access on a thread of its own; *r is its generalized request. */
static int post_in_background(const file_entry_t *e, int op, int64_t offset, void *buf, int count, int64_t bytes,
                              MPI_Request *r)
{
    thrd_t t;
    int rc;
    file_job_t *j = calloc(1, sizeof *j);
    if (!j)
        return mp_fail(MP_ENOMEM, "no memory for a nonblocking file access");
    *j = (file_job_t){ .e = e, .op = op, .count = count, .offset = offset, .bytes = bytes, .buf = buf };
    if ((rc = MP_MPI_CHECK(pal_mpi.Grequest_start(job_query, job_free, job_cancel, j, &j->greq), "MPI_Grequest_start"))) {
        free(j);
        return rc;
    }
    if (thrd_create(&t, job_run, j) != thrd_success) {
        MPI_Request g = j->greq; /* MPI frees the job with the request */
        pal_mpi.Grequest_complete(g);
        pal_mpi.Request_free(&g);
        return mp_fail(MP_ENOMEM, "no thread for a nonblocking file access");
    }
    thrd_detach(t);
    *r = j->greq;
    return 0;
}

int mp_file_ipost(mp_file_t file, int op, int64_t offset, void *buf, int64_t bytes, void *obj, mp_req_t *req)
{
    file_entry_t *e = NULL;
    MPI_Status st;
    MPI_Request r = MPI_REQUEST_NULL;
    mp_status_t done;
    mp_claim_t k;
    int rc, count = 0;
    if ((rc = file_get(file, &e)) || (rc = check_op(op, offset)) || (rc = io_count(e, buf, bytes, &count)))
        return rc;
    if (!req)
        return mp_fail_null_output("request");
    if (op != MP_IO_READ_AT && op != MP_IO_WRITE_AT)
        return mp_fail(MP_EINVAL, "nonblocking I/O is MP_IO_READ_AT or MP_IO_WRITE_AT, not %d", op);
    if ((rc = mp_claim(&k)))
        return rc;
    if (mp_g_thread_level == MP_THREAD_MULTIPLE) {
        mp_blocking_enter();
        rc = post_in_background(e, op, offset, buf, count, bytes, &r);
        mp_blocking_leave();
        return mp_claim_posted(&k, rc, r, obj, NULL, 1, req);
    }
    if ((rc = access_file(e, op, offset, buf, count, bytes, &st)))
        return mp_claim_posted(&k, rc, MPI_REQUEST_NULL, NULL, NULL, 1, req); /* the slot given back */
    file_status(&st, &done);
    slot_done_at_post(k.slot, 1, &done);
    *req = k.handle;
    return 0;
}

int mp_file_seek(mp_file_t file, int64_t offset, int whence, int shared)
{
    file_entry_t *e = NULL;
    int rc, w;
    if ((rc = file_get(file, &e)))
        return rc;
    switch (whence) {
    case MP_SEEK_SET: w = MPI_SEEK_SET; break;
    case MP_SEEK_CUR: w = MPI_SEEK_CUR; break;
    case MP_SEEK_END: w = MPI_SEEK_END; break;
    default: return mp_fail(MP_EINVAL, "seek origin %d is not MP_SEEK_*", whence);
    }
    mp_blocking_enter();
    rc = shared ? MP_MPI_CHECK(pal_mpi.File_seek_shared(e->mpi, (MPI_Offset)offset, w), "MPI_File_seek_shared")
                : MP_MPI_CHECK(pal_mpi.File_seek(e->mpi, (MPI_Offset)offset, w), "MPI_File_seek");
    mp_blocking_leave();
    return rc;
}

int mp_file_position(mp_file_t file, int shared, int64_t *offset)
{
    file_entry_t *e = NULL;
    MPI_Offset o = 0;
    int rc;
    if ((rc = file_get(file, &e)))
        return rc;
    mp_blocking_enter();
    rc = shared ? MP_MPI_CHECK(pal_mpi.File_get_position_shared(e->mpi, &o), "MPI_File_get_position_shared")
                : MP_MPI_CHECK(pal_mpi.File_get_position(e->mpi, &o), "MPI_File_get_position");
    mp_blocking_leave();
    if (!rc)
        *offset = (int64_t)o;
    return rc;
}

int mp_file_sync(mp_file_t file)
{
    file_entry_t *e = NULL;
    int rc;
    if ((rc = file_get(file, &e)))
        return rc;
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.File_sync(e->mpi), "MPI_File_sync");
    mp_blocking_leave();
    return rc;
}

/* set_size and preallocate: collective, bytes >= 0. */
static int resize(mp_file_t file, int64_t bytes, int (*fn)(MPI_File, MPI_Offset), const char *call)
{
    file_entry_t *e = NULL;
    int rc;
    if ((rc = file_get(file, &e)))
        return rc;
    if (bytes < 0)
        return mp_fail(MP_EINVAL, "file size %lld is negative", (long long)bytes);
    mp_blocking_enter();
    rc = MP_MPI_CHECK(fn(e->mpi, (MPI_Offset)bytes), call);
    mp_blocking_leave();
    return rc;
}

int mp_file_set_size(mp_file_t file, int64_t bytes)
{
    return resize(file, bytes, pal_mpi.File_set_size, "MPI_File_set_size");
}

int mp_file_preallocate(mp_file_t file, int64_t bytes)
{
    return resize(file, bytes, pal_mpi.File_preallocate, "MPI_File_preallocate");
}

int mp_file_get_size(mp_file_t file, int64_t *bytes)
{
    file_entry_t *e = NULL;
    MPI_Offset n = 0;
    int rc;
    if ((rc = file_get(file, &e)))
        return rc;
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.File_get_size(e->mpi, &n), "MPI_File_get_size");
    mp_blocking_leave();
    *bytes = (int64_t)n;
    return rc;
}

int mp_file_set_atomicity(mp_file_t file, int atomic)
{
    file_entry_t *e = NULL;
    int rc;
    if ((rc = file_get(file, &e)))
        return rc;
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.File_set_atomicity(e->mpi, atomic != 0), "MPI_File_set_atomicity");
    mp_blocking_leave();
    return rc;
}

int mp_file_get_atomicity(mp_file_t file, int *atomic)
{
    file_entry_t *e = NULL;
    int rc;
    if ((rc = file_get(file, &e)))
        return rc;
    return MP_MPI_CHECK(pal_mpi.File_get_atomicity(e->mpi, atomic), "MPI_File_get_atomicity");
}
