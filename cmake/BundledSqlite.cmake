# SQLite, built here from its amalgamation (deploy/fetch-sqlite.sh says where it comes from and
# why), as the target SQLite::SQLite3 the store links. -DCONCLAVE_BUNDLED_SQLITE=OFF links the
# system's libsqlite3 instead (Debian's 3.40.1: no lookaside; README, Architecture).
option(CONCLAVE_BUNDLED_SQLITE "Build SQLite from its amalgamation (fetched from npm)" ON)
if(NOT CONCLAVE_BUNDLED_SQLITE)
  find_package(SQLite3 REQUIRED)
  message(STATUS "sqlite: the system's ${SQLite3_VERSION} (CONCLAVE_BUNDLED_SQLITE=OFF)")
  return()
endif()

set(CONCLAVE_SQLITE_VERSION 3.53.2)
set(CONCLAVE_SQLITE_VERSION_NUMBER 3053002)
# One copy for every build directory of this checkout (build/, build-asan/), outside git
# (.gitignore): fetched once, checked against the script's hashes at every configure.
set(CONCLAVE_SQLITE_DIR ${PROJECT_SOURCE_DIR}/.cache/sqlite-${CONCLAVE_SQLITE_VERSION})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/deploy/fetch-sqlite.sh)
execute_process(
  COMMAND bash ${PROJECT_SOURCE_DIR}/deploy/fetch-sqlite.sh ${CONCLAVE_SQLITE_DIR}
          ${CONCLAVE_SQLITE_VERSION}
  RESULT_VARIABLE fetch_rc)
if(NOT fetch_rc EQUAL 0)
  message(FATAL_ERROR "SQLite ${CONCLAVE_SQLITE_VERSION}'s amalgamation could not be fetched "
                      "(above); or configure with -DCONCLAVE_BUNDLED_SQLITE=OFF to link the "
                      "system's libsqlite3")
endif()

enable_language(C)
add_library(conclave_sqlite STATIC ${CONCLAVE_SQLITE_DIR}/sqlite3.c)
target_include_directories(conclave_sqlite PUBLIC ${CONCLAVE_SQLITE_DIR})
# SQLite's own code, compiled as SQLite documents it: none of the project's warnings or
# sanitizers (they instrument the project's code; a report inside SQLite would not be ours),
# always optimized, whatever the build type.
set_target_properties(conclave_sqlite PROPERTIES COMPILE_OPTIONS "-w;-O2"
                                                 POSITION_INDEPENDENT_CODE ON)
target_compile_definitions(conclave_sqlite
  PUBLIC
    CONCLAVE_BUNDLED_SQLITE CONCLAVE_SQLITE_VERSION="${CONCLAVE_SQLITE_VERSION}"
    CONCLAVE_SQLITE_VERSION_NUMBER=${CONCLAVE_SQLITE_VERSION_NUMBER}
  PRIVATE
    # What the store relies on, as Debian's libsqlite3 has it: deleted content zeroed, URIs as
    # file names, triggers that may fire triggers, the dbstat table (a unit test counts index
    # cells with it), up to 250000 parameters, LIKE never matching a BLOB, temp files in memory
    # unless told otherwise.
    SQLITE_SECURE_DELETE SQLITE_USE_URI=1 SQLITE_DEFAULT_RECURSIVE_TRIGGERS=1
    SQLITE_ENABLE_DBSTAT_VTAB SQLITE_MAX_VARIABLE_NUMBER=250000 SQLITE_LIKE_DOESNT_MATCH_BLOBS
    SQLITE_TEMP_STORE=1
    # What differs: no memory statistics (and their global mutex) unless asked for, and no
    # loading of extensions, which nothing here does.
    SQLITE_DEFAULT_MEMSTATUS=0 SQLITE_OMIT_LOAD_EXTENSION
    # What autoconf would find on Linux: sub-second sleeps while busy (else whole seconds),
    # fdatasync, thread-safe time functions, posix_fallocate.
    HAVE_USLEEP=1 HAVE_NANOSLEEP=1 HAVE_FDATASYNC=1 HAVE_LOCALTIME_R=1 HAVE_GMTIME_R=1
    HAVE_POSIX_FALLOCATE=1 HAVE_ISNAN=1 HAVE_STRCHRNUL=1 HAVE_UTIME=1)
if(CONCLAVE_SANITIZE STREQUAL "")
  # Its lookaside serves a statement's small blocks from a per-connection pool.
  target_compile_definitions(conclave_sqlite PUBLIC CONCLAVE_SQLITE_LOOKASIDE)
else()
  # Under the sanitizers every block SQLite takes comes from malloc, as with Debian's library,
  # so AddressSanitizer still sees a read of a value SQLite freed (a column read after the
  # statement moved on, a bound string gone before its step).
  target_compile_definitions(conclave_sqlite PRIVATE SQLITE_OMIT_LOOKASIDE)
endif()
target_link_libraries(conclave_sqlite PUBLIC Threads::Threads m)
add_library(SQLite::SQLite3 ALIAS conclave_sqlite)
message(STATUS "sqlite: ${CONCLAVE_SQLITE_VERSION}, built here (${CONCLAVE_SQLITE_DIR})")
