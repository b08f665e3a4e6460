{#- The raw-data contract as DuckDB prints the types (generated from preftools/contract.py;
    tests/python/test_raw_inputs.py checks the two agree). Used by check_raw_inputs(). -#}
{% macro raw_contract() %}
{{ return({
    'ultrafeedback': {
        'hub_id': 'argilla/ultrafeedback-binarized-curation',
        'group': 'ultrafeedback',
        'columns': {
            'source': 'VARCHAR',
            'instruction': 'VARCHAR',
            'best_rated_is_different_from_best_overall': 'BOOLEAN',
            'best_overall_model': 'VARCHAR',
            'score_best_overall': 'DOUBLE',
            'best_rated_model': 'VARCHAR',
            'score_best_rated': 'DOUBLE',
            'best_overall_score_response': 'STRUCT(annotations STRUCT(helpfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[]), honesty STRUCT(Rating VARCHAR, Rationale VARCHAR), instruction_following STRUCT(Rating VARCHAR, Rationale VARCHAR), truthfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[])), average_rating DOUBLE, critique VARCHAR, custom_system_prompt VARCHAR, model VARCHAR, overall_score DOUBLE, principle VARCHAR, response VARCHAR)',
            'random_response_for_best_overall': 'STRUCT(annotations STRUCT(helpfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[]), honesty STRUCT(Rating VARCHAR, Rationale VARCHAR), instruction_following STRUCT(Rating VARCHAR, Rationale VARCHAR), truthfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[])), average_rating DOUBLE, critique VARCHAR, custom_system_prompt VARCHAR, model VARCHAR, overall_score DOUBLE, principle VARCHAR, response VARCHAR)',
            'best_rated_response': 'STRUCT(annotations STRUCT(helpfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[]), honesty STRUCT(Rating VARCHAR, Rationale VARCHAR), instruction_following STRUCT(Rating VARCHAR, Rationale VARCHAR), truthfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[])), average_rating DOUBLE, critique VARCHAR, custom_system_prompt VARCHAR, model VARCHAR, overall_score DOUBLE, principle VARCHAR, response VARCHAR)',
            'random_response_for_best_rated': 'STRUCT(annotations STRUCT(helpfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[]), honesty STRUCT(Rating VARCHAR, Rationale VARCHAR), instruction_following STRUCT(Rating VARCHAR, Rationale VARCHAR), truthfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[])), average_rating DOUBLE, critique VARCHAR, custom_system_prompt VARCHAR, model VARCHAR, overall_score DOUBLE, principle VARCHAR, response VARCHAR)',
            'score_random_response_for_best_overall': 'DOUBLE',
            'score_random_response_for_rated': 'DOUBLE',
            'completions': 'STRUCT(annotations STRUCT(helpfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[]), honesty STRUCT(Rating VARCHAR, Rationale VARCHAR), instruction_following STRUCT(Rating VARCHAR, Rationale VARCHAR), truthfulness STRUCT(Rating VARCHAR, Rationale VARCHAR, "Rationale For Rating" VARCHAR, "Type" VARCHAR[])), average_rating DOUBLE, critique VARCHAR, custom_system_prompt VARCHAR, model VARCHAR, overall_score DOUBLE, principle VARCHAR, response VARCHAR)[]',
            'random_response_for_rated': 'DOUBLE',
            'best_overall_score_response_critique_sentiment': 'DOUBLE',
        },
    },
    'code_ultrafeedback': {
        'hub_id': 'coseal/CodeUltraFeedback',
        'group': 'code_ultrafeedback',
        'columns': {
            'instruction': 'VARCHAR',
            'preference': 'VARCHAR',
            'models': 'VARCHAR[]',
            'responses': 'STRUCT(model VARCHAR, response VARCHAR)[]',
            'annotations': 'STRUCT(model VARCHAR, rating VARCHAR, rationale VARCHAR)[]',
        },
    },
    'code_ultrafeedback_standard': {
        'hub_id': 'RLHFlow/CodeUltraFeedback-standard',
        'group': 'code_ultrafeedback',
        'columns': {
            'chosen': 'STRUCT("content" VARCHAR, "role" VARCHAR)[]',
            'rejected': 'STRUCT("content" VARCHAR, "role" VARCHAR)[]',
            'chosen_score': 'VARCHAR',
            'rejected_score': 'VARCHAR',
        },
    },
    'rever_judge': {
        'hub_id': 'OpenRubrics/ReVeR-Traces-Judge',
        'group': 'rever',
        'columns': {
            'id': 'VARCHAR',
            'source': 'VARCHAR',
            'candidate': 'VARCHAR',
            'messages': 'STRUCT("role" VARCHAR, "content" VARCHAR)[]',
            'tools': 'VARCHAR',
        },
    },
    'rever_rubric': {
        'hub_id': 'OpenRubrics/ReVeR-Traces-Rubric',
        'group': 'rever',
        'columns': {
            'id': 'VARCHAR',
            'source': 'VARCHAR',
            'messages': 'STRUCT("role" VARCHAR, "content" VARCHAR)[]',
        },
    },
}) }}
{% endmacro %}
