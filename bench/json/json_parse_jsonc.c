/* json-c half of json_parse.c (its headers cannot share a file with jansson's). */
#include <stddef.h>

#include <json-c/json.h>

int p_jsonc(const char *s, size_t len);
size_t jsonc_tree_bytes(const char *s, size_t len, size_t (*heap)(void));

int p_jsonc(const char *s, size_t len)
{
	struct json_tokener *t = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	struct json_object *j = json_tokener_parse_ex(t, s, (int)len);
	int ok = j != NULL;
	json_object_put(j);
	json_tokener_free(t);
	return ok;
}

size_t jsonc_tree_bytes(const char *s, size_t len, size_t (*heap)(void))
{
	size_t before = heap();
	struct json_tokener *t = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	struct json_object *j = json_tokener_parse_ex(t, s, (int)len);
	size_t after = heap();
	json_object_put(j);
	json_tokener_free(t);
	return after > before ? after - before : 0;
}
