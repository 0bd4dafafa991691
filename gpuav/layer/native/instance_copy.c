/* What the Python side reads of a VkInstanceCreateInfo (instance_info.instance_settings),
 * copied, so that it can read it after vkCreateInstance has returned: an instance created
 * while the interpreter still starts (layer.c) is handed to Python later.
 *
 * The copy keeps the application info, the VkValidationFeaturesEXT enables and every
 * VkLayerSettingsCreateInfoEXT setting with its names and values; the rest of the chain, the
 * layer and extension names are left out. Every block comes from one list, freed at once. */

/* The head every kept structure starts with. */
struct gpuav_chained_structure {
    int32_t sType;
    uintptr_t pNext;
};

struct gpuav_instance_copy {
    struct gpuav_VkInstanceCreateInfo info;
    void **blocks;
    size_t block_count;
    int failed;
};

static void *gpuav_copy_block(struct gpuav_instance_copy *copy, const void *source, size_t size) {
    if (copy->failed || source == NULL || size == 0) {
        return NULL;
    }
    void **grown = realloc(copy->blocks, (copy->block_count + 1) * sizeof(*grown));
    void *block = malloc(size);
    if (grown != NULL) {
        copy->blocks = grown;
    }
    if (grown == NULL || block == NULL) {
        free(block);
        copy->failed = 1;
        return NULL;
    }
    memcpy(block, source, size);
    copy->blocks[copy->block_count++] = block;
    return block;
}

static uintptr_t gpuav_copy_string(struct gpuav_instance_copy *copy, uintptr_t text) {
    const char *source = (const char *)text;
    return source == NULL ? 0 : (uintptr_t)gpuav_copy_block(copy, source, strlen(source) + 1);
}

/* Bytes of one value of a VkLayerSettingTypeEXT other than STRING; 0 for an unknown type. */
static size_t gpuav_setting_value_size(int32_t type) {
    switch (type) {
    case 0: /* BOOL32 */
    case 1: /* INT32 */
    case 3: /* UINT32 */
    case 5: /* FLOAT32 */
        return 4;
    case 2: /* INT64 */
    case 4: /* UINT64 */
    case 6: /* FLOAT64 */
        return 8;
    default:
        return 0;
    }
}

#define GPUAV_SETTING_TYPE_STRING 7

static uintptr_t gpuav_copy_setting_values(struct gpuav_instance_copy *copy,
                                           const struct gpuav_VkLayerSettingEXT *setting) {
    if (setting->type != GPUAV_SETTING_TYPE_STRING) {
        size_t size = gpuav_setting_value_size(setting->type);
        return (uintptr_t)gpuav_copy_block(copy, (const void *)setting->pValues,
                                           size * setting->valueCount);
    }
    uintptr_t *strings = gpuav_copy_block(copy, (const void *)setting->pValues,
                                          sizeof(uintptr_t) * setting->valueCount);
    for (uint32_t i = 0; strings != NULL && i < setting->valueCount; i++) {
        strings[i] = gpuav_copy_string(copy, strings[i]);
    }
    return (uintptr_t)strings;
}

static uintptr_t gpuav_copy_layer_settings(
    struct gpuav_instance_copy *copy, const struct gpuav_VkLayerSettingsCreateInfoEXT *source) {
    struct gpuav_VkLayerSettingsCreateInfoEXT *chained =
        gpuav_copy_block(copy, source, sizeof(*source));
    if (chained == NULL) {
        return 0;
    }
    chained->pNext = 0;
    struct gpuav_VkLayerSettingEXT *settings = gpuav_copy_block(
        copy, (const void *)source->pSettings, sizeof(*settings) * source->settingCount);
    chained->pSettings = (uintptr_t)settings;
    for (uint32_t i = 0; settings != NULL && i < source->settingCount; i++) {
        settings[i].pLayerName = gpuav_copy_string(copy, settings[i].pLayerName);
        settings[i].pSettingName = gpuav_copy_string(copy, settings[i].pSettingName);
        settings[i].pValues = gpuav_copy_setting_values(copy, &settings[i]);
    }
    return (uintptr_t)chained;
}

static uintptr_t gpuav_copy_validation_features(
    struct gpuav_instance_copy *copy, const struct gpuav_VkValidationFeaturesEXT *source) {
    struct gpuav_VkValidationFeaturesEXT *features =
        gpuav_copy_block(copy, source, sizeof(*source));
    if (features == NULL) {
        return 0;
    }
    features->pNext = 0;
    features->pEnabledValidationFeatures = (uintptr_t)gpuav_copy_block(
        copy, (const void *)source->pEnabledValidationFeatures,
        sizeof(int32_t) * source->enabledValidationFeatureCount);
    features->disabledValidationFeatureCount = 0;
    features->pDisabledValidationFeatures = 0;
    return (uintptr_t)features;
}

static void gpuav_free_instance_copy(struct gpuav_instance_copy *copy) {
    for (size_t i = 0; copy != NULL && i < copy->block_count; i++) {
        free(copy->blocks[i]);
    }
    if (copy != NULL) {
        free(copy->blocks);
    }
    free(copy);
}

/* The copy of what the Python side reads of a create info; NULL when out of memory. */
static struct gpuav_instance_copy *gpuav_copy_instance_info(uintptr_t create_info) {
    const struct gpuav_VkInstanceCreateInfo *source = (const void *)create_info;
    struct gpuav_instance_copy *copy = calloc(1, sizeof(*copy));
    if (copy == NULL) {
        return NULL;
    }
    copy->info = *source;
    copy->info.enabledLayerCount = 0;
    copy->info.ppEnabledLayerNames = 0;
    copy->info.enabledExtensionCount = 0;
    copy->info.ppEnabledExtensionNames = 0;
    struct gpuav_VkApplicationInfo *application =
        gpuav_copy_block(copy, (const void *)source->pApplicationInfo, sizeof(*application));
    if (application != NULL) {
        application->pNext = 0;
        application->pApplicationName = 0;
        application->pEngineName = 0;
    }
    copy->info.pApplicationInfo = (uintptr_t)application;
    /* The kept structures, chained in the order they come. */
    uintptr_t *link = &copy->info.pNext;
    *link = 0;
    for (const struct gpuav_base_structure *node = (const void *)source->pNext; node != NULL;
         node = node->pNext) {
        uintptr_t kept = 0;
        if (node->sType == GPUAV_VALIDATION_FEATURES) {
            kept = gpuav_copy_validation_features(copy, (const void *)node);
        } else if (node->sType == GPUAV_LAYER_SETTINGS_CREATE_INFO) {
            kept = gpuav_copy_layer_settings(copy, (const void *)node);
        }
        if (kept != 0) {
            *link = kept;
            link = &((struct gpuav_chained_structure *)kept)->pNext;
        }
    }
    if (copy->failed) {
        gpuav_free_instance_copy(copy);
        return NULL;
    }
    return copy;
}
