/* files.c - mpcore tests: MPI-IO on MPI_COMM_SELF. */
#include "mpcore_tests.h"

/* Files on MPI_COMM_SELF: the amodes MPI itself refuses come back as MP_EMPI
 * with MPI_ERR_AMODE (System.MP refuses them before the core), argument
 * checks, a view of 8-byte etypes and a nonblocking write tracked as a request. */
void test_files(void)
{
    char path[] = "/tmp/motor-test-files-XXXXXX";
    int64_t v[4] = { 1, 2, 3, 4 }, back[4] = { 0 }, size = -1;
    mp_file_t f = -1;
    mp_info_t info = -1;
    mp_req_t r;
    mp_status_t st;
    int cls = 0, found = -1, fd = mkstemp(path);
    char value[16];
    CHECK(fd >= 0);
    close(fd);
    CHECK(mp_file_open(MP_COMM_SELF, path, MP_MODE_RDONLY | MP_MODE_CREATE, MP_INFO_NULL, &f) == MP_EMPI);
    CHECK(mp_last_error(&cls, NULL, 0) > 0 && cls == MPI_ERR_AMODE && last_error_mentions("MPI_ERR_AMODE"));
    CHECK(mp_file_open(MP_COMM_SELF, path, MP_MODE_RDWR | MP_MODE_SEQUENTIAL, MP_INFO_NULL, &f) == MP_EMPI);
    CHECK(mp_last_error(&cls, NULL, 0) > 0 && cls == MPI_ERR_AMODE);
    CHECK(mp_file_open(MP_COMM_SELF, path, 1 << 20, MP_INFO_NULL, &f) == MP_EINVAL);
    CHECK(mp_file_open(MP_COMM_SELF, path, MP_MODE_RDWR, 77, &f) == MP_EHANDLE);
    CHECK(mp_info_create(&info) == 0 && mp_info_set(info, "cb_nodes", "1") == 0);
    CHECK(mp_info_get(info, "cb_nodes", value, sizeof value, &found) == 1 && found == 1 && strcmp(value, "1") == 0);
    CHECK(mp_info_get(info, "absent", value, sizeof value, &found) == 0 && found == 0);
    CHECK(mp_file_open(MP_COMM_SELF, path, MP_MODE_RDWR, info, &f) == 0);
    CHECK(mp_info_free(info) == 0 && mp_info_free(info) == MP_EHANDLE);
    CHECK(mp_file_set_view(f, 0, 8, 2, 1, MP_INFO_NULL) == MP_EINVAL); /* stride < block */
    CHECK(mp_file_set_view(f, 0, 8, 0, 0, MP_INFO_NULL) == 0);
    CHECK(mp_file_io(f, MP_IO_WRITE_AT, 0, v, 12, NULL) == MP_ECOUNT); /* not whole etypes */
    CHECK(mp_file_io(f, MP_IO_WRITE_AT, -1, v, 8, NULL) == MP_EINVAL);
    CHECK(mp_file_io(f, MP_IO_COUNT, 0, v, 8, NULL) == MP_EINVAL);
    CHECK(mp_file_ipost(f, MP_IO_READ, 0, v, 8, NULL, &r) == MP_EINVAL);
    CHECK(mp_file_ipost(f, MP_IO_WRITE_AT, 1, v, 32, NULL, &r) == 0);
    CHECK(mp_req_wait(r, &st) == 0 && st.bytes == 32);
    {
        /* A subarray view, the second column of a 2 x 2 array 8 bytes in; refused shapes first. */
        const int32_t sizes[2] = { 2, 2 }, sub[2] = { 2, 1 }, starts[2] = { 0, 1 }, far[2] = { 0, 2 };
        int64_t col[2] = { 0 };
        CHECK(mp_file_set_view_subarray(f, 0, 8, 0, sizes, sub, starts, MP_INFO_NULL) == MP_EINVAL);
        CHECK(mp_file_set_view_subarray(f, 0, 8, 33, sizes, sub, starts, MP_INFO_NULL) == MP_EINVAL);
        CHECK(mp_file_set_view_subarray(f, 0, 8, 2, sizes, sub, NULL, MP_INFO_NULL) == MP_EINVAL);
        CHECK(mp_file_set_view_subarray(f, 0, 8, 2, sizes, sub, far, MP_INFO_NULL) == MP_EINVAL &&
              last_error_mentions("do not fit"));
        CHECK(mp_file_set_view_subarray(f, -8, 8, 2, sizes, sub, starts, MP_INFO_NULL) == MP_EINVAL);
        CHECK(mp_file_set_view_subarray(f, 8, 8, 2, sizes, sub, starts, MP_INFO_NULL) == 0);
        CHECK(mp_file_io(f, MP_IO_READ_AT, 0, col, 16, &st) == 0 && st.bytes == 16);
        CHECK(col[0] == 2 && col[1] == 4); /* the file holds 0 1 2 3 4: after 8 bytes, [[1 2] [3 4]] */
        CHECK(mp_file_set_view(f, 0, 8, 0, 0, MP_INFO_NULL) == 0);
    }
    CHECK(mp_file_io(f, MP_IO_READ_AT, 1, back, 32, &st) == 0 && st.bytes == 32 && back[3] == 4);
    CHECK(mp_file_get_size(f, &size) == 0 && size == 40);
    CHECK(mp_file_close(f) == 0 && mp_file_close(f) == MP_EHANDLE);
    CHECK(mp_file_delete(path, MP_INFO_NULL) == 0);
    CHECK(mp_file_delete(path, MP_INFO_NULL) == MP_EMPI && last_error_mentions("MPI_ERR_NO_SUCH_FILE"));
}
